package checkpoint

import "errors"

// ErrMissingObject is returned when a blob a change refers to is not in
// the checkpoint store (removed by hand, or the store was moved).
var ErrMissingObject = errors.New("checkpoint object missing")

// ErrCorruptObject is returned when a stored blob does not decompress or
// does not hash to its name.
var ErrCorruptObject = errors.New("checkpoint object corrupt")

// ErrTooManyFiles is returned by Snapshot when the workspace holds more
// files than Limits.MaxFiles: its commands cannot be checkpointed whole.
var ErrTooManyFiles = errors.New("too many files to checkpoint")

// ErrOutside is returned for a change whose path would lead outside the
// workspace or into .git; nothing is written there.
var ErrOutside = errors.New("outside the workspace")
