package sessionio

import "errors"

// ErrUnknownSource is returned by Read and DefaultPath for a source they
// do not know.
var ErrUnknownSource = errors.New("unknown source")
