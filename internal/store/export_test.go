package store

import "context"

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
