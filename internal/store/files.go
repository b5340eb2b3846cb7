package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

const qRecordFile = `INSERT INTO file_versions (session_id, path, mod_time, size, sha256)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, path) DO UPDATE SET
mod_time = excluded.mod_time, size = excluded.size, sha256 = excluded.sha256`

// RecordFile stores the version of a file the session last read or wrote,
// replacing what it knew of that path.
func (s *SQLite) RecordFile(ctx context.Context, sessionID string, v protocol.FileVersion) error {
	if err := s.write(ctx, func(q execer) error {
		_, err := q.ExecContext(ctx, qRecordFile, sessionID, v.Path, v.ModTime.UnixNano(), v.Size, v.SHA256)
		return err
	}); err != nil {
		return sessionError("record file "+v.Path, sessionID, err)
	}
	return nil
}

// Files returns the file versions the session knows, by path.
func (s *SQLite) Files(ctx context.Context, sessionID string) ([]protocol.FileVersion, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT path, mod_time, size, sha256 FROM file_versions
WHERE session_id = ? ORDER BY path`, sessionID)
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
