package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// DeleteSession removes a session and everything kept for it alone: its
// transcript, events, approvals, queued input, file versions, compaction
// records, quarantined records, grants for the session and its lease. The
// audit log keeps its decisions (it outlives sessions). It fails with
// *LeaseHeldError while another live owner holds the session's lease (a
// turn runs), and with an error wrapping ErrNotFound if there is no such
// session.
func (s *SQLite) DeleteSession(ctx context.Context, id, owner string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	defer rollback(tx)
	var held string
	var heldUntil int64
	err = tx.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE session_id = ?`, id).Scan(&held, &heldUntil)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("delete session %s: %w", id, err)
	case held == owner, ms(s.now()) >= heldUntil, s.ownerGone(held):
	default:
		return &LeaseHeldError{SessionID: id, Owner: held, ExpiresAt: fromMS(heldUntil)}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = ErrNotFound
		}
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	for _, q := range []string{
		`DELETE FROM leases WHERE session_id = ?`,
		`DELETE FROM quarantine WHERE session_id = ?`,
		`DELETE FROM permission_grants WHERE scope = 'session:' || ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}
