package clipboard

import "errors"

// ErrNoImage is matched by the error when the clipboard holds no picture
// of a format that can be sent (or nothing at all).
var ErrNoImage = errors.New("the clipboard holds no image")

// ErrNoTool is matched by the error when no tool to read the clipboard is
// there (or no display to read it from); the error names what to install.
var ErrNoTool = errors.New("no clipboard tool")

// ErrTooLarge is matched by the error for a picture larger than MaxBytes.
var ErrTooLarge = errors.New("the clipboard image is too large")
