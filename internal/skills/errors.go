package skills

import "errors"

// ErrNotFound is matched by the error for a skill or proposal that does
// not exist.
var ErrNotFound = errors.New("no such skill")

// ErrExists is matched by the error for accepting a proposal whose name an
// active skill already has.
var ErrExists = errors.New("a skill of that name already exists")

// ErrInvalid is matched by the error for a SKILL.md that cannot be used:
// no front matter, no name or description, a name that is not a folder
// name.
var ErrInvalid = errors.New("invalid skill")
