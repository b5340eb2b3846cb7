package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AddGrant stores a permission grant; adding one that exists is not an
// error.
func (s *Store) AddGrant(ctx context.Context, scope, rule string) error {
	tool, _, _ := strings.Cut(rule, "(")
	if _, err := s.write(ctx, `INSERT INTO permission_grants (scope, tool, pattern, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (scope, tool, pattern) DO NOTHING`,
		[]any{scope, tool, rule, s.stamp(time.Time{})}, nil); err != nil {
		return fmt.Errorf("add grant %q: %w", rule, fenceError(ctx, err))
	}
	return nil
}

// Grants returns the grants of the given scopes, oldest first.
func (s *Store) Grants(ctx context.Context, scopes ...string) ([]protocol.Grant, error) {
	out := []protocol.Grant{}
	if len(scopes) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT scope, pattern, created_at FROM permission_grants
WHERE scope = ANY($1) ORDER BY id`, scopes)
	if err != nil {
		return nil, fmt.Errorf("grants: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g protocol.Grant
		if err := rows.Scan(&g.Scope, &g.Rule, &g.CreatedAt); err != nil {
			return nil, fmt.Errorf("grants: %w", err)
		}
		g.CreatedAt = g.CreatedAt.UTC()
		out = append(out, g)
	}
	return out, rows.Err()
}

// RecordAudit stores one permission decision; e.ID and a zero e.CreatedAt
// are set.
func (s *Store) RecordAudit(ctx context.Context, e *protocol.AuditEntry) error {
	created := s.stamp(e.CreatedAt)
	var id int64
	if _, err := s.write(ctx, `INSERT INTO permission_audit
(session_id, tool, summary, decision, source, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		[]any{e.SessionID, e.Tool, e.Summary, e.Decision, e.Source, created}, func(rows pgx.Rows) error {
			if !rows.Next() {
				return rows.Err()
			}
			return rows.Scan(&id)
		}); err != nil {
		return fmt.Errorf("record audit: %w", fenceError(ctx, err))
	}
	e.ID, e.CreatedAt = id, created
	return nil
}

// Audit returns recorded decisions, oldest first: the session's, or every
// session's if sessionID is empty; limit 0 means all.
func (s *Store) Audit(ctx context.Context, sessionID string, limit int) ([]protocol.AuditEntry, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT id, session_id, tool, summary, decision, source, created_at
FROM permission_audit WHERE $1 = '' OR session_id = $1 ORDER BY id LIMIT $2`, sessionID, lim)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer rows.Close()
	out := []protocol.AuditEntry{}
	for rows.Next() {
		var e protocol.AuditEntry
		if err := rows.Scan(&e.ID, &e.SessionID, &e.Tool, &e.Summary, &e.Decision, &e.Source, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		e.CreatedAt = e.CreatedAt.UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}

// SetTrusted records that the user trusts the workspace at path, as the
// folder identity names, replacing an older record of the path.
func (s *Store) SetTrusted(ctx context.Context, path, identity string) error {
	if _, err := s.write(ctx, `INSERT INTO trusted_workspaces (path, identity, created_at) VALUES ($1, $2, $3)
ON CONFLICT (path) DO UPDATE SET identity = excluded.identity, created_at = excluded.created_at`,
		[]any{path, identity, s.stamp(time.Time{})}, nil); err != nil {
		return fmt.Errorf("trust %s: %w", path, fenceError(ctx, err))
	}
	return nil
}

// Trusted reports whether the user trusted the workspace at path, and the
// identity of the folder it trusted.
func (s *Store) Trusted(ctx context.Context, path string) (string, bool, error) {
	var identity string
	err := s.pool.QueryRow(ctx, `SELECT identity FROM trusted_workspaces WHERE path = $1`, path).Scan(&identity)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("trust of %s: %w", path, err)
	}
	return identity, true, nil
}

// RecordFile stores the version of a file the session last read or wrote,
// replacing what it knew of that path.
func (s *Store) RecordFile(ctx context.Context, sessionID string, v protocol.FileVersion) error {
	if _, err := s.write(ctx, `INSERT INTO file_versions (session_id, path, mod_time, size, sha256)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id, path) DO UPDATE SET
mod_time = excluded.mod_time, size = excluded.size, sha256 = excluded.sha256`,
		[]any{sessionID, v.Path, v.ModTime.UnixNano(), v.Size, v.SHA256}, nil); err != nil {
		return sessionError("record file "+v.Path, sessionID, err)
	}
	return nil
}

// Files returns the file versions the session knows, by path.
func (s *Store) Files(ctx context.Context, sessionID string) ([]protocol.FileVersion, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, mod_time, size, sha256 FROM file_versions
WHERE session_id = $1 ORDER BY path`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("files: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.FileVersion{}
	for rows.Next() {
		var v protocol.FileVersion
		var mt int64
		if err := rows.Scan(&v.Path, &mt, &v.Size, &v.SHA256); err != nil {
			return nil, fmt.Errorf("files: session %s: %w", sessionID, err)
		}
		v.ModTime = time.Unix(0, mt).UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}
