package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Messages returns the session's messages with Seq > afterSeq, in order.
// A message that cannot be decoded is quarantined and left out.
func (s *Store) Messages(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, content FROM messages
WHERE session_id = $1 AND seq > $2 ORDER BY seq`, sessionID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Message{}
	var bad []badRow
	for rows.Next() {
		var seq int64
		var content string
		if err := rows.Scan(&seq, &content); err != nil {
			return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
		}
		var m protocol.Message
		if err := json.Unmarshal([]byte(content), &m); err != nil {
			bad = append(bad, badRow{store.TableMessages, sessionID, strconv.FormatInt(seq, 10), seq, content, err})
			continue
		}
		m.Seq = seq
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	return out, nil
}

// Events returns the session's events with Sequence > afterSeq, in order;
// limit 0 means all. An event that cannot be decoded is quarantined and
// left out.
func (s *Store) Events(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]protocol.Event, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT sequence, payload FROM events
WHERE session_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`, sessionID, afterSeq, lim)
	if err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Event{}
	var bad []badRow
	for rows.Next() {
		var seq int64
		var payload string
		if err := rows.Scan(&seq, &payload); err != nil {
			return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
		}
		var e protocol.Event
		if err := json.Unmarshal([]byte(payload), &e); err != nil {
			bad = append(bad, badRow{store.TableEvents, sessionID, strconv.FormatInt(seq, 10), seq, payload, err})
			continue
		}
		e.Sequence = seq
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	return out, nil
}

// Compactions returns the session's compaction records, oldest first. A
// record that cannot be decoded is quarantined and left out.
func (s *Store) Compactions(ctx context.Context, sessionID string) ([]protocol.Compaction, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, record FROM compactions WHERE session_id = $1
ORDER BY up_to_seq, created_at`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Compaction{}
	var bad []badRow
	for rows.Next() {
		var id, raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
		}
		var c protocol.Compaction
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			bad = append(bad, badRow{store.TableCompactions, sessionID, id, 0, raw, err})
			continue
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("compactions: session %s: %w", sessionID, err)
	}
	return out, nil
}
