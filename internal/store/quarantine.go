package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// A record whose JSON cannot be decoded (a damaged file, a hand edit, a
// disk error) must not make its session unusable forever. The reads that
// decode records (Messages, Events, Compactions, PendingApprovals) move such
// a row into the quarantine table, in one transaction with a warning event
// of its session, and go on without it: the session stays usable, the row is
// kept, and `mx-claw doctor --repair` reports it and saves it to a file.

// The tables whose rows may be quarantined.
const (
	TableMessages    = "messages"
	TableEvents      = "events"
	TableCompactions = "compactions"
	TableApprovals   = "approvals"
)

// QuarantinedRow is a stored record set aside because it could not be
// decoded.
type QuarantinedRow struct {
	ID int64
	// Table is the table it came from (TableMessages, ...).
	Table     string
	SessionID string
	// Key is the record's Seq or Sequence as text, or its id.
	Key string
	// Content is the row's raw JSON column, as it was.
	Content []byte
	// Error is why it could not be decoded.
	Error string
	At    time.Time
	// Resolved is what `doctor --repair` did with it: "" while it waits,
	// "restored", or the file it was saved to.
	Resolved string
}

// What names the record for people: "message 3", "event 12",
// "compaction record c1", "pending approval a1".
func (q QuarantinedRow) What() string {
	switch q.Table {
	case TableMessages:
		return "message " + q.Key
	case TableEvents:
		return "event " + q.Key
	case TableCompactions:
		return "compaction record " + q.Key
	case TableApprovals:
		return "pending approval " + q.Key
	}
	return q.Table + " " + q.Key
}

// badRow is a row a read could not decode.
type badRow struct {
	table, sessionID, key string
	seq                   int64
	raw                   []byte
	err                   error
}

// quarantine moves rows out of their tables into the quarantine, each with
// a warning event of its session, in one transaction. A row that changed
// or went meanwhile (another reader quarantined it) is left alone.
func (s *SQLite) quarantine(ctx context.Context, rows []badRow) error {
	if len(rows) == 0 {
		return nil
	}
	now := s.now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	defer rollback(tx)
	for _, b := range rows {
		n, err := takeRowTx(ctx, tx, b, ms(now))
		if err != nil {
			return fmt.Errorf("quarantine %s %s of session %s: %w", b.table, b.key, b.sessionID, err)
		}
		if n == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO quarantine
(tbl, session_id, key, seq, content, error, quarantined_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			b.table, b.sessionID, b.key, b.seq, b.raw, b.err.Error(), ms(now)); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		q := QuarantinedRow{Table: b.table, Key: b.key}
		e := &protocol.Event{Type: protocol.EventWarning, SessionID: b.sessionID,
			Text: fmt.Sprintf("%s of this session could not be read (%v) and was set aside in the store's quarantine; "+
				"the session goes on without it. `mx-claw doctor --repair` reports such records and saves them to files.", q.What(), b.err)}
		var next int64
		if err := tx.StmtContext(ctx, s.st.nextEventSeq).QueryRowContext(ctx, b.sessionID).Scan(&next); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
		if _, err := s.insertEventTx(ctx, tx, e, next, now); err != nil {
			return fmt.Errorf("quarantine: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("quarantine: %w", err)
	}
	return nil
}

// takeRowTx removes a bad row from its table (a pending approval is
// cancelled instead) if it still holds the bad content, and reports how
// many rows it took.
func takeRowTx(ctx context.Context, tx *sql.Tx, b badRow, now int64) (int64, error) {
	var res sql.Result
	var err error
	switch b.table {
	case TableMessages:
		res, err = tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND seq = ? AND CAST(content AS BLOB) = ?`, b.sessionID, b.seq, b.raw)
	case TableEvents:
		res, err = tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ? AND sequence = ? AND CAST(payload AS BLOB) = ?`, b.sessionID, b.seq, b.raw)
	case TableCompactions:
		res, err = tx.ExecContext(ctx, `DELETE FROM compactions WHERE session_id = ? AND id = ? AND CAST(record AS BLOB) = ?`, b.sessionID, b.key, b.raw)
	case TableApprovals:
		res, err = tx.ExecContext(ctx, `UPDATE approvals SET status = 'cancelled', resolved_at = ?
WHERE session_id = ? AND id = ? AND status = 'pending'`, now, b.sessionID, b.key)
	default:
		return 0, fmt.Errorf("no table %q", b.table)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Quarantined returns the quarantined rows of a session (of every session
// if sessionID is ""), oldest first; with all false only those `doctor
// --repair` has not resolved yet.
func (s *SQLite) Quarantined(ctx context.Context, sessionID string, all bool) ([]QuarantinedRow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, tbl, session_id, key, content, error, quarantined_at, resolved
FROM quarantine WHERE (?1 = '' OR session_id = ?1) AND (?2 OR resolved = '') ORDER BY id`, sessionID, all)
	if err != nil {
		return nil, fmt.Errorf("quarantined records: %w", err)
	}
	defer rows.Close()
	var out []QuarantinedRow
	for rows.Next() {
		var q QuarantinedRow
		var at int64
		if err := rows.Scan(&q.ID, &q.Table, &q.SessionID, &q.Key, &q.Content, &q.Error, &at, &q.Resolved); err != nil {
			return nil, fmt.Errorf("quarantined records: %w", err)
		}
		q.At = fromMS(at)
		out = append(out, q)
	}
	return out, rows.Err()
}

// ResolveQuarantined records what was done with a quarantined row.
func (s *SQLite) ResolveQuarantined(ctx context.Context, id int64, resolved string) error {
	if _, err := s.w.ExecContext(ctx, `UPDATE quarantine SET resolved = ? WHERE id = ?`, resolved, id); err != nil {
		return fmt.Errorf("resolve quarantined record %d: %w", id, err)
	}
	return nil
}

// IntegrityCheck runs SQLite's quick_check and returns its findings; none
// means the file is sound.
func (s *SQLite) IntegrityCheck(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("integrity check: %w", err)
		}
		if line != "ok" {
			out = append(out, line)
		}
	}
	return out, rows.Err()
}
