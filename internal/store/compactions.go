package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Compactions returns the session's compaction records, oldest first.
func (s *SQLite) Compactions(ctx context.Context, sessionID string) ([]protocol.Compaction, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT record FROM compactions WHERE session_id = ?
ORDER BY up_to_seq, created_at`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Compaction{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
		}
		var c protocol.Compaction
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
