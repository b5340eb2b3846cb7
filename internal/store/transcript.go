package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AppendMessage appends m to the session's transcript in one short write
// transaction: it assigns the next Seq, stores m (as JSON, Seq included),
// and bumps the session's MessageCount and UpdatedAt. It sets m.Seq once
// the transaction has committed. A missing session is ErrNotFound.
func (s *SQLite) AppendMessage(ctx context.Context, sessionID string, m *protocol.Message) (int64, error) {
	if err := s.AppendBatch(ctx, sessionID, Batch{Messages: []*protocol.Message{m}}); err != nil {
		return 0, err
	}
	return m.Seq, nil
}

// AppendBatch stores b in one write transaction: its messages, then its
// events, as AppendMessage and AppendEvent would one by one, then its audit
// entries and file versions. Events may point at the messages of the
// batch: they are encoded after the messages got their Seq. Either
// everything is stored or nothing is (and no Seq or Sequence is changed).
func (s *SQLite) AppendBatch(ctx context.Context, sessionID string, b Batch) error {
	msgs, events := b.Messages, b.Events
	now := s.now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("append: session %s: %w", sessionID, err)
	}
	defer rollback(tx)
	if fc, ok := FenceOf(ctx); ok {
		if err := s.checkFenceTx(ctx, tx, fc); err != nil {
			return fmt.Errorf("append: %w", err)
		}
	}
	if err := dequeueTx(ctx, tx, sessionID, b.Dequeue); err != nil {
		return err
	}
	var newCreated, newUpdated time.Time
	var newStatus protocol.SessionStatus
	if b.NewSession != nil {
		if b.NewSession.ID != sessionID {
			return fmt.Errorf("append: new session %s in a batch of session %s", b.NewSession.ID, sessionID)
		}
		if newCreated, newUpdated, newStatus, err = s.createSessionTx(ctx, tx, b.NewSession); err != nil {
			return err
		}
	}
	var updAt time.Time
	var updCount, updCreated int64
	if b.UpdateSession != nil {
		if b.UpdateSession.ID != sessionID {
			return fmt.Errorf("append: update of session %s in a batch of session %s", b.UpdateSession.ID, sessionID)
		}
		if updAt, updCount, updCreated, err = s.updateSessionTx(ctx, tx, b.UpdateSession); err != nil {
			return err
		}
	}
	oldSeqs := make([]int64, len(msgs))
	committed := false
	defer func() {
		if !committed {
			for i, m := range msgs {
				m.Seq = oldSeqs[i]
			}
		}
	}()
	if len(msgs) > 0 {
		next, err := s.reserveMessagesTx(ctx, tx, sessionID, len(msgs), ms(now))
		if err != nil {
			return err
		}
		for i, m := range msgs {
			oldSeqs[i] = m.Seq
			if err := s.insertMessageTx(ctx, tx, sessionID, m, next+int64(i), ms(now)); err != nil {
				return err
			}
			m.Seq = next + int64(i)
		}
	}
	type assigned struct {
		seq int64
		ts  time.Time
	}
	done := make([]assigned, len(events))
	if len(events) > 0 {
		for _, e := range events {
			if e.SessionID != sessionID {
				return fmt.Errorf("append: event for session %s in a batch of session %s", e.SessionID, sessionID)
			}
		}
		var next int64
		if err := tx.StmtContext(ctx, s.st.nextEventSeq).QueryRowContext(ctx, sessionID).Scan(&next); err != nil {
			return fmt.Errorf("append event: session %s: %w", sessionID, err)
		}
		for i, e := range events {
			ts, err := s.insertEventTx(ctx, tx, e, next+int64(i), now)
			if err != nil {
				return err
			}
			done[i] = assigned{next + int64(i), ts}
		}
	}
	if len(b.Audit) > 0 {
		ins := tx.StmtContext(ctx, s.st.insertAudit)
		for _, e := range b.Audit {
			created := e.CreatedAt
			if created.IsZero() {
				created = now
			}
			if _, err := ins.ExecContext(ctx, e.SessionID, e.Tool, e.Summary, e.Decision, e.Source, ms(created)); err != nil {
				return fmt.Errorf("append: audit: %w", err)
			}
		}
	}
	if c := b.Compaction; c != nil {
		raw, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("append: compaction: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO compactions (session_id, id, up_to_seq, record, created_at)
VALUES (?, ?, ?, ?, ?)`, sessionID, c.ID, c.UpToSeq, string(raw), ms(now)); err != nil {
			return sessionError("append: compaction", sessionID, err)
		}
	}
	if len(b.Files) > 0 {
		rec := tx.StmtContext(ctx, s.st.recordFile)
		for _, v := range b.Files {
			if _, err := rec.ExecContext(ctx, sessionID, v.Path, v.ModTime.UnixNano(), v.Size, v.SHA256); err != nil {
				return sessionError("append: file version "+v.Path, sessionID, err)
			}
		}
	}
	if err := s.appendHistoryTx(ctx, tx, sessionID, b, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("append: session %s: %w", sessionID, err)
	}
	committed = true
	if us := b.UpdateSession; us != nil {
		// The messages of the batch were counted after the update.
		us.UpdatedAt, us.CreatedAt, us.MessageCount = updAt, fromMS(updCreated), updCount+int64(len(msgs))
	}
	if ns := b.NewSession; ns != nil {
		ns.CreatedAt, ns.UpdatedAt, ns.Status, ns.MessageCount = newCreated, newUpdated, newStatus, 0
	}
	for i, e := range events {
		e.Sequence, e.Timestamp = done[i].seq, done[i].ts
	}
	return nil
}

// reserveMessagesTx counts n new messages of the session in its row and
// returns the Seq the first of them gets.
func (s *SQLite) reserveMessagesTx(ctx context.Context, tx *sql.Tx, sessionID string, n int, now int64) (int64, error) {
	res, err := tx.StmtContext(ctx, s.st.bumpSession).ExecContext(ctx, n, now, sessionID)
	if err != nil {
		return 0, fmt.Errorf("append message: session %s: %w", sessionID, err)
	}
	if rows, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("append message: session %s: %w", sessionID, err)
	} else if rows == 0 {
		return 0, fmt.Errorf("append message: session %s: %w", sessionID, ErrNotFound)
	}
	var seq int64
	if err := tx.StmtContext(ctx, s.st.nextMessageSeq).QueryRowContext(ctx, sessionID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("append message: session %s: %w", sessionID, err)
	}
	return seq, nil
}

// insertMessageTx stores m with Seq seq within tx.
func (s *SQLite) insertMessageTx(ctx context.Context, tx *sql.Tx, sessionID string, m *protocol.Message, seq, now int64) error {
	stored := *m
	stored.Seq = seq
	content, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("append message: session %s: %w", sessionID, err)
	}
	if _, err := tx.StmtContext(ctx, s.st.insertMessage).ExecContext(ctx,
		sessionID, seq, string(m.Role), string(content), now); err != nil {
		return fmt.Errorf("append message: session %s: %w", sessionID, err)
	}
	return nil
}

// Messages returns the session's messages with Seq > afterSeq, in order.
// It reads through the (session_id, seq) primary key, so reading the tail
// of a long transcript costs only the tail.
func (s *SQLite) Messages(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.Message, error) {
	st, err := s.st.reader()
	if err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	rows, err := st.messages.QueryContext(ctx, sessionID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Message{}
	var bad []badRow
	for rows.Next() {
		var seq int64
		var content []byte
		if err := rows.Scan(&seq, &content); err != nil {
			return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
		}
		var m protocol.Message
		if err := json.Unmarshal(content, &m); err != nil {
			bad = append(bad, badRow{TableMessages, sessionID, strconv.FormatInt(seq, 10), seq, content, err})
			continue
		}
		m.Seq = seq
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	rows.Close()
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("messages: session %s: %w", sessionID, err)
	}
	return out, nil
}

// AppendEvent stores e in one short write transaction, assigning the next
// Sequence of its session (1, 2, ...). The stored payload is e's JSON with
// that Sequence; a zero Timestamp becomes now, and the Timestamp is stored
// in UTC. e.Sequence and e.Timestamp are set once the transaction has
// committed, so e equals what Events returns. A missing session is
// ErrNotFound.
//
// The store keeps whatever it is given; not storing deltas (see
// protocol.EventType.Stored) is the caller's choice.
func (s *SQLite) AppendEvent(ctx context.Context, e *protocol.Event) error {
	return s.AppendBatch(ctx, e.SessionID, Batch{Events: []*protocol.Event{e}})
}

// insertEventTx stores e with Sequence seq within tx and returns the
// Timestamp it was stored with.
func (s *SQLite) insertEventTx(ctx context.Context, tx *sql.Tx, e *protocol.Event, seq int64, now time.Time) (time.Time, error) {
	ts := e.Timestamp
	if ts.IsZero() {
		ts = now
	}
	ts = ts.UTC()
	stored := *e
	stored.Sequence, stored.Timestamp = seq, ts
	payload, err := json.Marshal(&stored)
	if err != nil {
		return ts, fmt.Errorf("append event: session %s: %w", e.SessionID, err)
	}
	if _, err := tx.StmtContext(ctx, s.st.insertEvent).ExecContext(ctx,
		e.SessionID, seq, string(e.Type), string(payload), ms(now)); err != nil {
		return ts, sessionError("append event", e.SessionID, err)
	}
	return ts, nil
}

// Events returns the session's events with Sequence > afterSeq, in order;
// limit 0 means all.
func (s *SQLite) Events(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]protocol.Event, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	st, err := s.st.reader()
	if err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	rows, err := st.events.QueryContext(ctx, sessionID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Event{}
	var bad []badRow
	for rows.Next() {
		var seq int64
		var payload []byte
		if err := rows.Scan(&seq, &payload); err != nil {
			return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
		}
		var e protocol.Event
		if err := json.Unmarshal(payload, &e); err != nil {
			bad = append(bad, badRow{TableEvents, sessionID, strconv.FormatInt(seq, 10), seq, payload, err})
			continue
		}
		e.Sequence = seq
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	rows.Close()
	if err := s.quarantine(ctx, bad); err != nil {
		return nil, fmt.Errorf("events: session %s: %w", sessionID, err)
	}
	return out, nil
}
