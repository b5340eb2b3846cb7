package store

import (
	"context"
	"database/sql"
)

// ExecRaw runs a statement on the writer, as a hand edit would (the
// conformance suite's Backend.Exec).
func (s *SQLite) ExecRaw(ctx context.Context, q string) error {
	_, err := s.w.ExecContext(ctx, q)
	return err
}

// QueryStringRaw returns the first column of the one row q returns.
func (s *SQLite) QueryStringRaw(ctx context.Context, q string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, q).Scan(&v)
	return v, err
}

// Writer is the store's writing connection pool, for tests that fill
// tables in bulk.
func (s *SQLite) Writer() *sql.DB { return s.w }
