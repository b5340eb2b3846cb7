package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// CreateApproval stores a pending approval; a.ID must be set. It sets
// a.Status to pending and a zero a.CreatedAt to now.
func (s *Store) CreateApproval(ctx context.Context, a *protocol.Approval) error {
	if a.ID == "" {
		return fmt.Errorf("create approval: session %s: empty id", a.SessionID)
	}
	call, err := json.Marshal(a.Call)
	if err != nil {
		return fmt.Errorf("create approval %s: %w", a.ID, err)
	}
	remaining := a.Remaining
	if remaining == nil {
		remaining = []protocol.ToolCall{}
	}
	rem, err := json.Marshal(remaining)
	if err != nil {
		return fmt.Errorf("create approval %s: %w", a.ID, err)
	}
	created := s.stamp(a.CreatedAt)
	if _, err := s.write(ctx, `INSERT INTO approvals
(id, session_id, turn_id, call, summary, remaining, status, feedback, waiter, created_at)
VALUES ($1, $2, $3, $4, $5, $6, 'pending', '', $7, $8)`,
		[]any{a.ID, a.SessionID, a.TurnID, string(call), a.Summary, string(rem), a.Waiter, created}, nil); err != nil {
		return sessionError("create approval "+a.ID, a.SessionID, err)
	}
	a.Status, a.Feedback, a.CreatedAt, a.ResolvedAt = protocol.ApprovalPending, "", created, time.Time{}
	return nil
}

// approvalColumns are the columns scanApproval reads, in its order.
const approvalColumns = `id, session_id, turn_id, call, summary, remaining, status, feedback,
scope, rule, answered_by, waiter, created_at, resolved_at`

// scanApproval reads one approval row. A call or remaining list that does
// not decode is returned as a badRow (with a nil error) for quarantine.
func scanApproval(sc interface{ Scan(...any) error }) (protocol.Approval, *badRow, error) {
	var a protocol.Approval
	var call, rem string
	var resolved *time.Time
	if err := sc.Scan(&a.ID, &a.SessionID, &a.TurnID, &call, &a.Summary, &rem, &a.Status, &a.Feedback,
		&a.Scope, &a.Rule, &a.AnsweredBy, &a.Waiter, &a.CreatedAt, &resolved); err != nil {
		return a, nil, err
	}
	if err := json.Unmarshal([]byte(call), &a.Call); err != nil {
		return a, &badRow{store.TableApprovals, a.SessionID, a.ID, 0, call, fmt.Errorf("call: %w", err)}, nil
	}
	if err := json.Unmarshal([]byte(rem), &a.Remaining); err != nil {
		return a, &badRow{store.TableApprovals, a.SessionID, a.ID, 0, rem, fmt.Errorf("remaining calls: %w", err)}, nil
	}
	if len(a.Remaining) == 0 {
		a.Remaining = nil
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if resolved != nil {
		a.ResolvedAt = resolved.UTC()
	}
	return a, nil, nil
}

// GetApproval returns an approval whatever its status, or an error
// wrapping store.ErrNotFound. A turn waiting for an answer reads it here,
// so an answer given in another process reaches it.
func (s *Store) GetApproval(ctx context.Context, sessionID, id string) (protocol.Approval, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE session_id = $1 AND id = $2`, sessionID, id)
	a, bad, err := scanApproval(row)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, store.ErrNotFound)
	case err != nil:
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, err)
	case bad != nil:
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, bad.err)
	}
	return a, nil
}

// PendingApprovals returns the session's pending approvals, oldest first.
// One that cannot be decoded is quarantined and left out.
func (s *Store) PendingApprovals(ctx context.Context, sessionID string) ([]protocol.Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE session_id = $1 AND status = 'pending' ORDER BY created_at, n`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("pending approvals: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Approval{}
	var bad []badRow
	for rows.Next() {
		a, b, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("pending approvals: session %s: %w", sessionID, err)
		}
		if b != nil {
			bad = append(bad, *b)
			continue
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending approvals: session %s: %w", sessionID, err)
	}
	rows.Close()
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("pending approvals: session %s: %w", sessionID, err)
	}
	return out, nil
}

// ResolveApproval stores the answer to a pending approval; of two
// answers to one approval, in any processes, exactly one succeeds, the
// other gets store.ErrNotFound.
func (s *Store) ResolveApproval(ctx context.Context, sessionID, id string, r store.Resolution) error {
	if r.Status != protocol.ApprovalApproved && r.Status != protocol.ApprovalRejected {
		return fmt.Errorf("resolve approval %s: status %q is not %q or %q", id, r.Status, protocol.ApprovalApproved, protocol.ApprovalRejected)
	}
	tag, err := s.write(ctx, `UPDATE approvals SET status = $1, feedback = $2, scope = $3, rule = $4,
answered_by = $5, resolved_at = $6
WHERE session_id = $7 AND id = $8 AND status = 'pending'`,
		[]any{string(r.Status), r.Feedback, string(r.Scope), r.Rule, r.By, s.stamp(time.Time{}), sessionID, id}, nil)
	if err != nil {
		return fmt.Errorf("resolve approval %s: %w", id, leaseError(sessionID, err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("resolve approval %s: no such pending approval in session %s: %w", id, sessionID, store.ErrNotFound)
	}
	return nil
}

// ClearPendingApprovals marks all the session's pending approvals
// "cancelled".
func (s *Store) ClearPendingApprovals(ctx context.Context, sessionID string) error {
	if _, err := s.write(ctx, `UPDATE approvals SET status = 'cancelled', resolved_at = $1
WHERE session_id = $2 AND status = 'pending'`, []any{s.stamp(time.Time{}), sessionID}, nil); err != nil {
		return fmt.Errorf("clear pending approvals: session %s: %w", sessionID, leaseError(sessionID, err))
	}
	return nil
}

// EnqueueInput stores a user message to send when the session is free.
func (s *Store) EnqueueInput(ctx context.Context, sessionID, content string) (protocol.QueuedInput, error) {
	created := s.stamp(time.Time{})
	var id int64
	_, err := s.write(ctx, `INSERT INTO queued_inputs (session_id, content, created_at)
VALUES ($1, $2, $3) RETURNING id`, []any{sessionID, content, created}, func(rows pgx.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		return rows.Scan(&id)
	})
	if err != nil {
		return protocol.QueuedInput{}, sessionError("enqueue input", sessionID, err)
	}
	return protocol.QueuedInput{ID: id, SessionID: sessionID, Content: content, CreatedAt: created}, nil
}

// TakeInputs removes and returns the session's queued inputs, oldest
// first, in one DELETE … RETURNING: an input is taken by exactly one
// caller.
func (s *Store) TakeInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	out := []protocol.QueuedInput{}
	_, err := s.write(ctx, `DELETE FROM queued_inputs WHERE session_id = $1
RETURNING id, content, created_at`, []any{sessionID}, func(rows pgx.Rows) error {
		for rows.Next() {
			q := protocol.QueuedInput{SessionID: sessionID}
			if err := rows.Scan(&q.ID, &q.Content, &q.CreatedAt); err != nil {
				return err
			}
			q.CreatedAt = q.CreatedAt.UTC()
			out = append(out, q)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("take inputs: session %s: %w", sessionID, leaseError(sessionID, err))
	}
	slices.SortFunc(out, func(a, b protocol.QueuedInput) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// QueuedInputs returns the session's queued inputs, oldest first, leaving
// them queued.
func (s *Store) QueuedInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, content, created_at FROM queued_inputs
WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.QueuedInput{}
	for rows.Next() {
		q := protocol.QueuedInput{SessionID: sessionID}
		if err := rows.Scan(&q.ID, &q.Content, &q.CreatedAt); err != nil {
			return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
		}
		q.CreatedAt = q.CreatedAt.UTC()
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queued inputs: session %s: %w", sessionID, err)
	}
	return out, nil
}

// QueuedSessions returns the ids of the sessions that have queued inputs.
func (s *Store) QueuedSessions(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT session_id FROM queued_inputs`)
	if err != nil {
		return nil, fmt.Errorf("queued sessions: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("queued sessions: %w", err)
	}
	return ids, nil
}

// RemoveInput removes one queued input and returns it, in one DELETE …
// RETURNING: of a removal and the turn taking the queue, exactly one gets
// the input. An input no longer queued is store.ErrNotFound.
func (s *Store) RemoveInput(ctx context.Context, sessionID string, id int64) (protocol.QueuedInput, error) {
	q := protocol.QueuedInput{ID: id, SessionID: sessionID}
	found := false
	_, err := s.write(ctx, `DELETE FROM queued_inputs WHERE session_id = $1 AND id = $2
RETURNING content, created_at`, []any{sessionID, id}, func(rows pgx.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		found = true
		return rows.Scan(&q.Content, &q.CreatedAt)
	})
	if err != nil {
		return q, fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, leaseError(sessionID, err))
	}
	if !found {
		return q, fmt.Errorf("remove queued input %d: session %s: %w", id, sessionID, store.ErrNotFound)
	}
	q.CreatedAt = q.CreatedAt.UTC()
	return q, nil
}

// EditInput replaces the content of one queued input; it keeps its id and
// so its place in the queue. An input no longer queued is
// store.ErrNotFound.
func (s *Store) EditInput(ctx context.Context, sessionID string, id int64, content string) (protocol.QueuedInput, error) {
	q := protocol.QueuedInput{ID: id, SessionID: sessionID, Content: content}
	found := false
	_, err := s.write(ctx, `UPDATE queued_inputs SET content = $1 WHERE session_id = $2 AND id = $3
RETURNING created_at`, []any{content, sessionID, id}, func(rows pgx.Rows) error {
		if !rows.Next() {
			return rows.Err()
		}
		found = true
		return rows.Scan(&q.CreatedAt)
	})
	if err != nil {
		return q, fmt.Errorf("edit queued input %d: session %s: %w", id, sessionID, leaseError(sessionID, err))
	}
	if !found {
		return q, fmt.Errorf("edit queued input %d: session %s: %w", id, sessionID, store.ErrNotFound)
	}
	q.CreatedAt = q.CreatedAt.UTC()
	return q, nil
}
