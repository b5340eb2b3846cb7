package sandbox

import "errors"

// ErrInvalidSettings is matched by every error about a malformed `sandbox`
// settings entry.
var ErrInvalidSettings = errors.New("invalid sandbox settings")

// ErrUnavailable is matched by the error of a backend asked for by name
// that this machine cannot run.
var ErrUnavailable = errors.New("sandbox backend unavailable")

// SetupError reports a sandbox that could not be set up for a command. The
// command did not run, sandboxed or not.
type SetupError struct {
	// Backend is the backend that failed.
	Backend string
	// Reason is what went wrong, e.g. bwrap's own message.
	Reason string
}

// Error returns "sandbox (bwrap) could not be set up: <reason>; the
// command did not run".
func (e *SetupError) Error() string {
	return "sandbox (" + e.Backend + ") could not be set up: " + e.Reason + "; the command did not run"
}
