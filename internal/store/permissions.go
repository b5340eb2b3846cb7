package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AddGrant stores a permission grant. The rule is kept as text; the tool
// name before its "(" is stored apart so grants can be listed by tool.
// Adding a grant that exists is not an error.
func (s *SQLite) AddGrant(ctx context.Context, scope, rule string) error {
	tool, _, _ := strings.Cut(rule, "(")
	if err := s.write(ctx, func(q execer) error {
		_, err := q.ExecContext(ctx, `INSERT INTO permission_grants (scope, tool, pattern, created_at)
VALUES (?, ?, ?, ?) ON CONFLICT (scope, tool, pattern) DO NOTHING`, scope, tool, rule, ms(s.now()))
		return err
	}); err != nil {
		return fmt.Errorf("add grant %q: %w", rule, err)
	}
	return nil
}

// Grants returns the grants of the given scopes, oldest first.
func (s *SQLite) Grants(ctx context.Context, scopes ...string) ([]protocol.Grant, error) {
	out := []protocol.Grant{}
	if len(scopes) == 0 {
		return out, nil
	}
	args := make([]any, len(scopes))
	for i, sc := range scopes {
		args[i] = sc
	}
	q := `SELECT scope, pattern, created_at FROM permission_grants WHERE scope IN (?` +
		strings.Repeat(",?", len(scopes)-1) + `) ORDER BY id`
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g protocol.Grant
		var created int64
		if err := rows.Scan(&g.Scope, &g.Rule, &created); err != nil {
			return nil, fmt.Errorf("grants: %w", err)
		}
		g.CreatedAt = fromMS(created)
		out = append(out, g)
	}
	return out, rows.Err()
}

// RecordAudit stores one permission decision; e.ID and a zero e.CreatedAt
// are set.
func (s *SQLite) RecordAudit(ctx context.Context, e *protocol.AuditEntry) error {
	e.CreatedAt = s.stamp(e.CreatedAt)
	err := s.write(ctx, func(q execer) error {
		return q.QueryRowContext(ctx, `INSERT INTO permission_audit
(session_id, tool, summary, decision, source, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			e.SessionID, e.Tool, e.Summary, e.Decision, e.Source, ms(e.CreatedAt)).Scan(&e.ID)
	})
	if err != nil {
		return fmt.Errorf("record audit: %w", err)
	}
	return nil
}

// Audit returns recorded decisions, oldest first: the session's, or every
// session's if sessionID is empty; limit 0 means all.
func (s *SQLite) Audit(ctx context.Context, sessionID string, limit int) ([]protocol.AuditEntry, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, session_id, tool, summary, decision, source, created_at
FROM permission_audit WHERE ? = '' OR session_id = ? ORDER BY id LIMIT ?`, sessionID, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	out := []protocol.AuditEntry{}
	for rows.Next() {
		var e protocol.AuditEntry
		var created int64
		if err := rows.Scan(&e.ID, &e.SessionID, &e.Tool, &e.Summary, &e.Decision, &e.Source, &created); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		e.CreatedAt = fromMS(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetTrusted records that the user trusts the workspace at path, as the
// folder identity names, replacing an older record of the path.
func (s *SQLite) SetTrusted(ctx context.Context, path, identity string) error {
	if err := s.write(ctx, func(q execer) error {
		_, err := q.ExecContext(ctx, `INSERT INTO trusted_workspaces (path, created_at, identity) VALUES (?, ?, ?)
ON CONFLICT (path) DO UPDATE SET identity = excluded.identity, created_at = excluded.created_at`,
			path, ms(s.now()), identity)
		return err
	}); err != nil {
		return fmt.Errorf("trust %s: %w", path, err)
	}
	return nil
}

// Trusted reports whether the user trusted the workspace at path, and the
// identity of the folder it trusted ("" for a record older than identities).
func (s *SQLite) Trusted(ctx context.Context, path string) (string, bool, error) {
	var identity string
	err := s.r.QueryRowContext(ctx, `SELECT identity FROM trusted_workspaces WHERE path = ?`, path).Scan(&identity)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("trust of %s: %w", path, err)
	}
	return identity, true, nil
}
