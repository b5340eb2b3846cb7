package modelcmd

import (
	"errors"
	"fmt"
)

// ErrCancelled is what a Prompter returns when the user backs out (Esc,
// Ctrl-C, end of input). Handlers return it as is, having saved nothing.
var ErrCancelled = errors.New("cancelled")

// UsageError is a mistake in what was asked: an unknown provider or model,
// a missing argument, a switch to another provider. Front ends show it as
// it is (the CLI exits 2).
type UsageError struct{ Err error }

// Error returns the message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// DiscoveryError is a /models answer with a non-2xx status. Body is the
// start of the answer (at most 1,000 bytes) with the request's API key
// replaced by secret.Redacted, in case the server echoed it.
type DiscoveryError struct {
	Status int
	Body   string
}

// Error returns "Model discovery failed (<status>): <body>", the article's
// wording.
func (e *DiscoveryError) Error() string {
	return fmt.Sprintf("Model discovery failed (%d): %s", e.Status, e.Body)
}
