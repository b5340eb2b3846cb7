package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

const sessionColumns = `id, title, workspace, model, status, parent_id, last_error,
input_tokens, output_tokens, cached_tokens, reasoning_tokens,
message_count, created_at, updated_at, cost_usd, context_percent, agent`

// CreateSession stores a new session. s.ID must be set. Zero CreatedAt and
// UpdatedAt become now and an empty Status becomes idle; the times in s are
// set to what the store keeps (UTC, to the millisecond).
func (s *SQLite) CreateSession(ctx context.Context, sess *protocol.Session) error {
	return s.AppendBatch(ctx, sess.ID, Batch{NewSession: sess})
}

// createSessionTx inserts sess within tx and fills in what the store
// decides (times, status); it returns the values to set once committed.
func (s *SQLite) createSessionTx(ctx context.Context, tx *sql.Tx, sess *protocol.Session) (created, updated time.Time, status protocol.SessionStatus, err error) {
	if sess.ID == "" {
		return created, updated, status, errors.New("create session: empty id")
	}
	created = s.stamp(sess.CreatedAt)
	updated = created
	if !sess.UpdatedAt.IsZero() {
		updated = s.stamp(sess.UpdatedAt)
	}
	status = sess.Status
	if status == "" {
		status = protocol.StatusIdle
	}
	u := sess.Usage
	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
		sess.ID, sess.Title, sess.Workspace, sess.Model, string(status), sess.ParentID, sess.LastError,
		u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens,
		ms(created), ms(updated), sess.CostUSD, sess.ContextPercent, sess.Agent)
	if err != nil {
		return created, updated, status, fmt.Errorf("create session %s: %w", sess.ID, err)
	}
	return created, updated, status, nil
}

// GetSession returns a session or an error wrapping ErrNotFound.
func (s *SQLite) GetSession(ctx context.Context, id string) (*protocol.Session, error) {
	st, err := s.st.reader()
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, err)
	}
	sess, err := scanSession(st.getSession.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, err)
	}
	return &sess, nil
}

// ListSessions returns sessions, most recently updated first.
func (s *SQLite) ListSessions(ctx context.Context, opts ListOptions) ([]protocol.Session, error) {
	var q strings.Builder
	var args []any
	q.WriteString(`SELECT ` + sessionColumns + ` FROM sessions WHERE 1`)
	if opts.Workspace != "" {
		q.WriteString(` AND workspace = ?`)
		args = append(args, opts.Workspace)
	}
	if opts.Status != "" {
		q.WriteString(` AND status = ?`)
		args = append(args, string(opts.Status))
	}
	switch {
	case opts.Parent != "":
		q.WriteString(` AND parent_id = ?`)
		args = append(args, opts.Parent)
	case !opts.WithChildren:
		q.WriteString(` AND parent_id = ''`)
	}
	q.WriteString(` ORDER BY updated_at DESC, rowid DESC`)
	if opts.Limit > 0 {
		q.WriteString(` LIMIT ?`)
		args = append(args, opts.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	out := []protocol.Session{}
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// UpdateSession stores title, model, status, last error and usage of s and
// sets its UpdatedAt to now. It also refreshes s's CreatedAt and
// MessageCount from the store. A missing session is ErrNotFound.
func (s *SQLite) UpdateSession(ctx context.Context, sess *protocol.Session) error {
	return s.AppendBatch(ctx, sess.ID, Batch{UpdateSession: sess})
}

// updateSessionTx stores sess's mutable fields within tx and returns what
// to set on sess once committed.
func (s *SQLite) updateSessionTx(ctx context.Context, tx *sql.Tx, sess *protocol.Session) (updated time.Time, count, created int64, err error) {
	updated = s.stamp(s.now())
	u := sess.Usage
	err = tx.StmtContext(ctx, s.st.updateSession).QueryRowContext(ctx,
		sess.Title, sess.Model, string(sess.Status), sess.LastError,
		u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens,
		ms(updated), sess.CostUSD, sess.ContextPercent, sess.ID).Scan(&count, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return updated, 0, 0, fmt.Errorf("update session: session %s: %w", sess.ID, ErrNotFound)
	}
	if err != nil {
		return updated, 0, 0, fmt.Errorf("update session %s: %w", sess.ID, err)
	}
	return updated, count, created, nil
}

type rowScanner interface{ Scan(dest ...any) error }

func scanSession(r rowScanner) (protocol.Session, error) {
	var sess protocol.Session
	var status string
	var created, updated int64
	err := r.Scan(&sess.ID, &sess.Title, &sess.Workspace, &sess.Model, &status,
		&sess.ParentID, &sess.LastError,
		&sess.Usage.InputTokens, &sess.Usage.OutputTokens, &sess.Usage.CachedTokens,
		&sess.Usage.ReasoningTokens, &sess.MessageCount, &created, &updated, &sess.CostUSD, &sess.ContextPercent, &sess.Agent)
	if err != nil {
		return protocol.Session{}, err
	}
	sess.Status = protocol.SessionStatus(status)
	sess.CreatedAt, sess.UpdatedAt = fromMS(created), fromMS(updated)
	return sess, nil
}
