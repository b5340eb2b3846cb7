package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

const sessionColumns = `id, title, workspace, model, status, parent_id, last_error,
input_tokens, output_tokens, cached_tokens, reasoning_tokens,
message_count, created_at, updated_at, cost_usd, context_percent, agent`

// GetSession returns a session or an error wrapping store.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (*protocol.Session, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get session %s: %w", id, err)
	}
	return &sess, nil
}

// ListSessions returns sessions, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, opts store.ListOptions) ([]protocol.Session, error) {
	var q strings.Builder
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	q.WriteString(`SELECT ` + sessionColumns + ` FROM sessions WHERE true`)
	if opts.Workspace != "" {
		q.WriteString(` AND workspace = ` + arg(opts.Workspace))
	}
	if opts.Status != "" {
		q.WriteString(` AND status = ` + arg(string(opts.Status)))
	}
	// Subagents' sessions are listed only when asked for.
	switch {
	case opts.Parent != "":
		q.WriteString(` AND parent_id = ` + arg(opts.Parent))
	case !opts.WithChildren:
		q.WriteString(` AND parent_id = ''`)
	}
	q.WriteString(` ORDER BY updated_at DESC, n DESC`)
	if opts.Limit > 0 {
		q.WriteString(` LIMIT ` + arg(opts.Limit))
	}
	rows, err := s.pool.Query(ctx, q.String(), args...)
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

func scanSession(r pgx.Row) (protocol.Session, error) {
	var sess protocol.Session
	var status string
	var created, updated time.Time
	err := r.Scan(&sess.ID, &sess.Title, &sess.Workspace, &sess.Model, &status,
		&sess.ParentID, &sess.LastError,
		&sess.Usage.InputTokens, &sess.Usage.OutputTokens, &sess.Usage.CachedTokens,
		&sess.Usage.ReasoningTokens, &sess.MessageCount, &created, &updated, &sess.CostUSD, &sess.ContextPercent, &sess.Agent)
	if err != nil {
		return protocol.Session{}, err
	}
	sess.Status = protocol.SessionStatus(status)
	sess.CreatedAt, sess.UpdatedAt = created.UTC(), updated.UTC()
	return sess, nil
}
