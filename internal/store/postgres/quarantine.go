package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// A record that cannot be decoded is set aside as the SQLite store does
// (internal/store/quarantine.go): moved to the quarantine table with a
// warning event of its session, in one transaction, and the read goes on
// without it.

// badRow is a row a read could not decode.
type badRow struct {
	table, sessionID, key string
	seq                   int64
	raw                   string
	err                   error
}

// quarantine moves rows out of their tables into the quarantine, each with
// a warning event of its session. A row that changed or went meanwhile
// (another reader quarantined it) is left alone.
func (s *Store) quarantine(ctx context.Context, rows []badRow) error {
	if len(rows) == 0 {
		return nil
	}
	now := s.stamp(time.Time{})
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, b := range rows {
		tag, err := takeRow(ctx, tx, b, now)
		if err != nil {
			return fmt.Errorf("quarantine %s %s of session %s: %w", b.table, b.key, b.sessionID, err)
		}
		if tag.RowsAffected() == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO quarantine
(tbl, session_id, key, seq, content, error, quarantined_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			b.table, b.sessionID, b.key, b.seq, []byte(b.raw), b.err.Error(), now); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		q := store.QuarantinedRow{Table: b.table, Key: b.key}
		e := protocol.Event{Type: protocol.EventWarning, SessionID: b.sessionID, Timestamp: now,
			Text: fmt.Sprintf("%s of this session could not be read (%v) and was set aside in the store's quarantine; "+
				"the session goes on without it. `mx-claw doctor --repair` reports such records and saves them to files.", q.What(), b.err)}
		if err := tx.QueryRow(ctx, `UPDATE sessions SET last_event_seq = last_event_seq + 1 WHERE id = $1
RETURNING last_event_seq`, b.sessionID).Scan(&e.Sequence); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		payload, err := json.Marshal(&e)
		if err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO events (session_id, sequence, type, payload, created_at)
VALUES ($1, $2, $3, $4, $5)`, b.sessionID, e.Sequence, string(e.Type), string(payload), now); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		if _, err := tx.Exec(ctx, qNotify, s.channel, notice(b.sessionID, e.Sequence)); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	return nil
}

// takeRow removes a bad row from its table (a pending approval is
// cancelled instead) if it still holds the bad content.
func takeRow(ctx context.Context, tx pgx.Tx, b badRow, now time.Time) (pgconn.CommandTag, error) {
	switch b.table {
	case store.TableMessages:
		return tx.Exec(ctx, `DELETE FROM messages WHERE session_id = $1 AND seq = $2 AND content = $3`, b.sessionID, b.seq, b.raw)
	case store.TableEvents:
		return tx.Exec(ctx, `DELETE FROM events WHERE session_id = $1 AND sequence = $2 AND payload = $3`, b.sessionID, b.seq, b.raw)
	case store.TableCompactions:
		return tx.Exec(ctx, `DELETE FROM compactions WHERE session_id = $1 AND id = $2 AND record = $3`, b.sessionID, b.key, b.raw)
	case store.TableApprovals:
		return tx.Exec(ctx, `UPDATE approvals SET status = 'cancelled', resolved_at = $1
WHERE session_id = $2 AND id = $3 AND status = 'pending'`, now, b.sessionID, b.key)
	}
	return pgconn.CommandTag{}, fmt.Errorf("no table %q", b.table)
}

// Quarantined returns the quarantined rows of a session ("" for every
// session), oldest first; with all false only those not resolved yet.
func (s *Store) Quarantined(ctx context.Context, sessionID string, all bool) ([]store.QuarantinedRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, tbl, session_id, key, content, error, quarantined_at, resolved
FROM quarantine WHERE ($1 = '' OR session_id = $1) AND ($2 OR resolved = '') ORDER BY id`, sessionID, all)
	if err != nil {
		return nil, fmt.Errorf("quarantined records: %w", err)
	}
	defer rows.Close()
	var out []store.QuarantinedRow
	for rows.Next() {
		var q store.QuarantinedRow
		if err := rows.Scan(&q.ID, &q.Table, &q.SessionID, &q.Key, &q.Content, &q.Error, &q.At, &q.Resolved); err != nil {
			return nil, fmt.Errorf("quarantined records: %w", err)
		}
		q.At = q.At.UTC()
		out = append(out, q)
	}
	return out, rows.Err()
}

// ResolveQuarantined records what was done with a quarantined row.
func (s *Store) ResolveQuarantined(ctx context.Context, id int64, resolved string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE quarantine SET resolved = $1 WHERE id = $2`, resolved, id); err != nil {
		return fmt.Errorf("resolve quarantined record %d: %w", id, err)
	}
	return nil
}

// IntegrityCheck has nothing to report: PostgreSQL guards its own pages
// (WAL, and data checksums where the cluster has them); `mx-claw doctor
// --repair` still reads every session through and saves what cannot be
// decoded.
func (s *Store) IntegrityCheck(ctx context.Context) ([]string, error) {
	return nil, s.pool.Ping(ctx)
}
