package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// CreateApproval stores a pending approval; a.ID must be set. It sets
// a.Status to pending and a zero a.CreatedAt to now (UTC, to the
// millisecond). A missing session is ErrNotFound.
func (s *SQLite) CreateApproval(ctx context.Context, a *protocol.Approval) error {
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
	if _, err := s.w.ExecContext(ctx, `INSERT INTO approvals
(id, session_id, turn_id, call, summary, remaining, status, feedback, waiter, created_at)
VALUES (?, ?, ?, ?, ?, ?, 'pending', '', ?, ?)`,
		a.ID, a.SessionID, a.TurnID, string(call), a.Summary, string(rem), a.Waiter, ms(created)); err != nil {
		return sessionError("create approval "+a.ID, a.SessionID, err)
	}
	a.Status, a.Feedback, a.CreatedAt, a.ResolvedAt = protocol.ApprovalPending, "", created, time.Time{}
	a.Scope, a.Rule, a.AnsweredBy = "", "", ""
	return nil
}

// approvalColumns are the columns scanApproval reads, in its order.
const approvalColumns = `id, session_id, turn_id, call, summary, remaining, status, feedback,
scope, rule, answered_by, waiter, created_at, resolved_at`

// scanApproval reads one approval row. A call or remaining list that does
// not decode is returned as a badRow (with a nil error) for quarantine.
func scanApproval(sc interface{ Scan(...any) error }) (protocol.Approval, *badRow, error) {
	var a protocol.Approval
	var call, rem []byte
	var created int64
	var resolved sql.NullInt64
	if err := sc.Scan(&a.ID, &a.SessionID, &a.TurnID, &call, &a.Summary, &rem, &a.Status, &a.Feedback,
		&a.Scope, &a.Rule, &a.AnsweredBy, &a.Waiter, &created, &resolved); err != nil {
		return a, nil, err
	}
	if err := json.Unmarshal(call, &a.Call); err != nil {
		return a, &badRow{TableApprovals, a.SessionID, a.ID, 0, call, fmt.Errorf("call: %w", err)}, nil
	}
	if err := json.Unmarshal(rem, &a.Remaining); err != nil {
		return a, &badRow{TableApprovals, a.SessionID, a.ID, 0, rem, fmt.Errorf("remaining calls: %w", err)}, nil
	}
	if len(a.Remaining) == 0 {
		a.Remaining = nil
	}
	a.CreatedAt = fromMS(created)
	if resolved.Valid {
		a.ResolvedAt = fromMS(resolved.Int64)
	}
	return a, nil, nil
}

// GetApproval returns an approval whatever its status, or an error
// wrapping ErrNotFound. A turn waiting for an answer reads it here, so
// an answer given in another process reaches it.
func (s *SQLite) GetApproval(ctx context.Context, sessionID, id string) (protocol.Approval, error) {
	row := s.r.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE session_id = ? AND id = ?`, sessionID, id)
	a, bad, err := scanApproval(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, ErrNotFound)
	case err != nil:
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, err)
	case bad != nil:
		return a, fmt.Errorf("approval %s of session %s: %w", id, sessionID, bad.err)
	}
	return a, nil
}

// PendingApprovals returns the session's pending approvals, oldest first.
func (s *SQLite) PendingApprovals(ctx context.Context, sessionID string) ([]protocol.Approval, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE session_id = ? AND status = 'pending' ORDER BY created_at, rowid`, sessionID)
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

// Resolution is a person's answer to an approval, as ResolveApproval
// stores it.
type Resolution struct {
	// Status is protocol.ApprovalApproved or protocol.ApprovalRejected.
	Status protocol.ApprovalStatus
	// Feedback is what the person told the model with a rejection.
	Feedback string
	// Scope is once (or empty), session or always; Rule the rule to
	// save instead of the suggested one.
	Scope protocol.ApprovalScope
	Rule  string
	// By names who answered, when it was not the process that asked.
	By string
}

// ResolveApproval stores the answer to a pending approval. It fails with
// an error wrapping ErrNotFound if no such approval is pending, so of two
// front ends answering the same approval, in any processes, exactly one
// succeeds.
func (s *SQLite) ResolveApproval(ctx context.Context, sessionID, id string, r Resolution) error {
	if r.Status != protocol.ApprovalApproved && r.Status != protocol.ApprovalRejected {
		return fmt.Errorf("resolve approval %s: status %q is not %q or %q", id, r.Status, protocol.ApprovalApproved, protocol.ApprovalRejected)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE approvals SET status = ?, feedback = ?, scope = ?, rule = ?,
answered_by = ?, resolved_at = ?
WHERE session_id = ? AND id = ? AND status = 'pending'`,
		r.Status, r.Feedback, r.Scope, r.Rule, r.By, ms(s.now()), sessionID, id)
	if err != nil {
		return fmt.Errorf("resolve approval %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("resolve approval %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("resolve approval %s: no such pending approval in session %s: %w", id, sessionID, ErrNotFound)
	}
	return nil
}

// ClearPendingApprovals marks all the session's pending approvals
// "cancelled".
func (s *SQLite) ClearPendingApprovals(ctx context.Context, sessionID string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE approvals SET status = ?, resolved_at = ?
WHERE session_id = ? AND status = ?`, protocol.ApprovalCancelled, ms(s.now()), sessionID, protocol.ApprovalPending); err != nil {
		return fmt.Errorf("clear pending approvals: session %s: %w", sessionID, err)
	}
	return nil
}

// EnqueueInput stores a user message to send when the session is free. A
// missing session is ErrNotFound.
func (s *SQLite) EnqueueInput(ctx context.Context, sessionID, content string) (protocol.QueuedInput, error) {
	created := s.stamp(s.now())
	var id int64
	err := s.w.QueryRowContext(ctx, `INSERT INTO queued_inputs (session_id, content, created_at)
VALUES (?, ?, ?) RETURNING id`, sessionID, content, ms(created)).Scan(&id)
	if err != nil {
		return protocol.QueuedInput{}, sessionError("enqueue input", sessionID, err)
	}
	return protocol.QueuedInput{ID: id, SessionID: sessionID, Content: content, CreatedAt: created}, nil
}

// TakeInputs removes and returns the session's queued inputs, oldest first,
// in one DELETE ... RETURNING statement: an input is taken by exactly one
// caller.
func (s *SQLite) TakeInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	rows, err := s.w.QueryContext(ctx, `DELETE FROM queued_inputs WHERE session_id = ?
RETURNING id, content, created_at`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("take inputs: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.QueuedInput{}
	for rows.Next() {
		q := protocol.QueuedInput{SessionID: sessionID}
		var created int64
		if err := rows.Scan(&q.ID, &q.Content, &created); err != nil {
			return nil, fmt.Errorf("take inputs: session %s: %w", sessionID, err)
		}
		q.CreatedAt = fromMS(created)
		out = append(out, q)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("take inputs: session %s: %w", sessionID, err)
	}
	// RETURNING yields rows in no promised order.
	slices.SortFunc(out, func(a, b protocol.QueuedInput) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
