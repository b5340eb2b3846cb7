package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Compactions returns the session's compaction records, oldest first.
func (s *SQLite) Compactions(ctx context.Context, sessionID string) ([]protocol.Compaction, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, record FROM compactions WHERE session_id = ?
ORDER BY up_to_seq, created_at`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Compaction{}
	var bad []badRow
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
		}
		var c protocol.Compaction
		if err := json.Unmarshal(raw, &c); err != nil {
			bad = append(bad, badRow{TableCompactions, sessionID, id, 0, raw, err})
			continue
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	rows.Close()
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	return out, nil
}
