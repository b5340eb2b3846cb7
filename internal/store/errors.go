package store

import (
	"errors"
	"fmt"
)

// ErrNotDatabase is returned by Open when the file is not an SQLite
// database, or its header is corrupt. The file is left untouched.
var ErrNotDatabase = errors.New("not an SQLite database, or corrupt")

// SchemaTooNewError is returned by Open when the database was migrated by a
// newer mx-claw than this one. The file is left untouched.
type SchemaTooNewError struct {
	Path      string
	Version   int // the database's schema version
	Supported int // the newest version this binary knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database %s has schema version %d, newer than this mx-claw supports (%d); upgrade mx-claw",
		e.Path, e.Version, e.Supported)
}
