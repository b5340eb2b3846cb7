package store

import (
	"context"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// QueuedInputs returns the session's queued inputs, oldest first, leaving
// them queued.
func (s *SQLite) QueuedInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, content, created_at FROM queued_inputs
WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.QueuedInput{}
	for rows.Next() {
		q := protocol.QueuedInput{SessionID: sessionID}
		var created int64
		if err := rows.Scan(&q.ID, &q.Content, &created); err != nil {
			return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
		}
		q.CreatedAt = fromMS(created)
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
	}
	return out, nil
}

// RemoveInput deletes one queued input; one that is not queued is
// ErrNotFound. It races safely with TakeInputs: an input is either taken
// (and sent) or removed, never both.
func (s *SQLite) RemoveInput(ctx context.Context, sessionID string, id int64) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM queued_inputs WHERE session_id = ? AND id = ?`, sessionID, id)
	if err != nil {
		return fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, err)
	}
	if n == 0 {
		return fmt.Errorf("queued input %d of session %s: %w", id, sessionID, ErrNotFound)
	}
	return nil
}
