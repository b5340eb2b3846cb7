package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const qLeaseOf = `SELECT owner, expires_at FROM leases WHERE session_id = ?`

// execer is what a write runs on: the writer pool or one of its
// transactions.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// write runs f on the writer: directly, or, if ctx is fenced (WithLease),
// in a transaction that checks the fence first.
func (s *SQLite) write(ctx context.Context, f func(q execer) error) error {
	fc, ok := FenceOf(ctx)
	if !ok {
		return f(s.w)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	if err := s.checkFenceTx(ctx, tx, fc); err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// checkFenceTx fails with ErrLeaseLost unless the fence's owner holds the
// session's unexpired lease. Within a BEGIN IMMEDIATE transaction no other
// process can take the lease over before it commits.
func (s *SQLite) checkFenceTx(ctx context.Context, tx *sql.Tx, fc Fence) error {
	var owner string
	var expires int64
	err := tx.StmtContext(ctx, s.st.leaseOf).QueryRowContext(ctx, fc.SessionID).Scan(&owner, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("session %s: no lease held by %s: %w", fc.SessionID, fc.Owner, ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("session %s: check lease: %w", fc.SessionID, err)
	case owner != fc.Owner:
		return fmt.Errorf("session %s: the lease of %s was taken over by %s: %w", fc.SessionID, fc.Owner, owner, ErrLeaseLost)
	case ms(s.now()) >= expires:
		return fmt.Errorf("session %s: the lease of %s expired at %s: %w", fc.SessionID, fc.Owner,
			fromMS(expires).Format("15:04:05.000"), ErrLeaseLost)
	}
	return nil
}
