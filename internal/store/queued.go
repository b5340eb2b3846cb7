package store

import (
	"context"
	"database/sql"
	"errors"
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

// QueuedSessions returns the ids of the sessions that have queued inputs.
func (s *SQLite) QueuedSessions(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT session_id FROM queued_inputs`)
	if err != nil {
		return nil, fmt.Errorf("queued sessions: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("queued sessions: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queued sessions: %w", err)
	}
	return out, nil
}

// RemoveInput removes one queued input and returns it, in one DELETE ...
// RETURNING statement: of a removal and the turn taking the queue, exactly
// one gets the input. An input no longer queued is ErrNotFound.
func (s *SQLite) RemoveInput(ctx context.Context, sessionID string, id int64) (protocol.QueuedInput, error) {
	q := protocol.QueuedInput{ID: id, SessionID: sessionID}
	var created int64
	err := s.w.QueryRowContext(ctx, `DELETE FROM queued_inputs WHERE session_id = ? AND id = ?
RETURNING content, created_at`, sessionID, id).Scan(&q.Content, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, ErrNotFound)
	}
	if err != nil {
		return q, fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, err)
	}
	q.CreatedAt = fromMS(created)
	return q, nil
}

// EditInput replaces the content of one queued input; it keeps its id and
// so its place in the queue. An input no longer queued is ErrNotFound.
func (s *SQLite) EditInput(ctx context.Context, sessionID string, id int64, content string) (protocol.QueuedInput, error) {
	q := protocol.QueuedInput{ID: id, SessionID: sessionID, Content: content}
	var created int64
	err := s.w.QueryRowContext(ctx, `UPDATE queued_inputs SET content = ? WHERE session_id = ? AND id = ?
RETURNING created_at`, content, sessionID, id).Scan(&created)
	if errors.Is(err, sql.ErrNoRows) {
		return q, fmt.Errorf("edit queued input %d: session %s: %w", id, sessionID, ErrNotFound)
	}
	if err != nil {
		return q, fmt.Errorf("edit queued input %d: session %s: %w", id, sessionID, err)
	}
	q.CreatedAt = fromMS(created)
	return q, nil
}

// dequeueTx takes the inputs a batch sends out of the queue within tx; it
// fails with ErrQueueChanged if one is no longer queued with the content
// it was read with.
func dequeueTx(ctx context.Context, tx *sql.Tx, sessionID string, list []protocol.QueuedInput) error {
	for _, q := range list {
		res, err := tx.ExecContext(ctx, `DELETE FROM queued_inputs WHERE session_id = ? AND id = ? AND content = ?`,
			sessionID, q.ID, q.Content)
		if err != nil {
			return fmt.Errorf("append: dequeue input %d: session %s: %w", q.ID, sessionID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("append: dequeue input %d: session %s: %w", q.ID, sessionID, err)
		} else if n != 1 {
			return fmt.Errorf("append: queued input %d of session %s: %w", q.ID, sessionID, ErrQueueChanged)
		}
	}
	return nil
}
