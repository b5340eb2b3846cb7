package tools

import (
	"errors"
	"fmt"
)

// ErrUnknownTool is returned by [Registry.Validate] for a name no tool is
// registered under.
var ErrUnknownTool = errors.New("unknown tool")

// ErrOutsideWorkspace is matched (with errors.Is) by every error that
// refuses a path because it lies outside the workspace root and its allowed
// directories.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// ErrGitInternals is matched (with errors.Is) by every error that refuses
// to write inside a .git directory.
var ErrGitInternals = errors.New("path is inside .git")

// outsideError is the error for a path outside the workspace. Its message
// is meant for the model, so it names the path as given and, when a
// symlink took it outside, where it led.
type outsideError struct {
	path     string // as given by the caller
	root     string
	resolved string // set when symlinks moved the path
}

func (e *outsideError) Error() string {
	msg := fmt.Sprintf("path %q is outside the workspace %s", e.path, e.root)
	if e.resolved != "" {
		msg += fmt.Sprintf(" (it resolves to %s through a symlink)", e.resolved)
	}
	return msg
}

func (e *outsideError) Is(target error) bool { return target == ErrOutsideWorkspace }

// gitError is the error for a write into .git internals.
type gitError struct {
	rel string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("refusing to write %s: files inside .git are managed by git "+
		"and are never written by file tools", e.rel)
}

func (e *gitError) Is(target error) bool { return target == ErrGitInternals }
