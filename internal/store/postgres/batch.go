package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

const (
	qInsertSession = `INSERT INTO sessions (id, title, workspace, model, status, parent_id, last_error,
input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, context_percent, created_at, updated_at, agent)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`
	qUpdateSession = `UPDATE sessions SET title = $2, model = $3, status = $4, last_error = $5,
input_tokens = $6, output_tokens = $7, cached_tokens = $8, reasoning_tokens = $9,
cost_usd = $10, context_percent = $11, updated_at = $12
WHERE id = $1 RETURNING message_count, created_at`
	// qReserve gives out the numbers of a batch's messages and events and
	// counts its messages; it locks the session's row until commit, which
	// serialises the appends of one session in every process.
	qReserve = `UPDATE sessions SET last_message_seq = last_message_seq + $2, message_count = message_count + $2,
last_event_seq = last_event_seq + $3,
updated_at = CASE WHEN $2 > 0 THEN $4 ELSE updated_at END
WHERE id = $1 RETURNING last_message_seq - $2, last_event_seq - $3`
	qInsertMessages = `INSERT INTO messages (session_id, seq, role, content, created_at)
SELECT $1, x.seq, x.role, x.content, $5 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(seq, role, content)`
	qInsertEvents = `INSERT INTO events (session_id, sequence, type, payload, created_at)
SELECT $1, x.seq, x.type, x.payload, $5 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS x(seq, type, payload)`
	qInsertAudits = `INSERT INTO permission_audit (session_id, tool, summary, decision, source, created_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])`
	qRecordFiles = `INSERT INTO file_versions (session_id, path, mod_time, size, sha256)
SELECT $1, x.path, x.mod_time, x.size, x.sha256
FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[]) AS x(path, mod_time, size, sha256)
ON CONFLICT (session_id, path) DO UPDATE SET
mod_time = excluded.mod_time, size = excluded.size, sha256 = excluded.sha256`
	qInsertCompaction = `INSERT INTO compactions (session_id, id, up_to_seq, record, created_at)
VALUES ($1, $2, $3, $4, $5)`
	qNotify = `SELECT pg_notify($1, $2)`
	// qDequeue takes a batch's sent inputs out of the queue if each is
	// still queued with the content it was read with; the caller counts
	// the rows. A concurrent edit or removal holds the row until it
	// commits, and the DELETE then sees its result.
	qDequeue = `DELETE FROM queued_inputs q USING unnest($2::bigint[], $3::text[]) AS x(id, content)
WHERE q.session_id = $1 AND q.id = x.id AND q.content = x.content RETURNING q.id`
)

// CreateSession stores a new session (see store.Store).
func (s *Store) CreateSession(ctx context.Context, sess *protocol.Session) error {
	return s.AppendBatch(ctx, sess.ID, store.Batch{NewSession: sess})
}

// UpdateSession stores the mutable fields of sess and bumps its UpdatedAt;
// it refreshes sess's CreatedAt and MessageCount from the store.
func (s *Store) UpdateSession(ctx context.Context, sess *protocol.Session) error {
	return s.AppendBatch(ctx, sess.ID, store.Batch{UpdateSession: sess})
}

// AppendMessage appends m to the session's transcript and sets m.Seq.
func (s *Store) AppendMessage(ctx context.Context, sessionID string, m *protocol.Message) (int64, error) {
	if err := s.AppendBatch(ctx, sessionID, store.Batch{Messages: []*protocol.Message{m}}); err != nil {
		return 0, err
	}
	return m.Seq, nil
}

// AppendEvent stores e and sets its Sequence (and a zero Timestamp).
func (s *Store) AppendEvent(ctx context.Context, e *protocol.Event) error {
	return s.AppendBatch(ctx, e.SessionID, store.Batch{Events: []*protocol.Event{e}})
}

// AppendBatch stores b in one transaction (see store.Store): in a first
// round trip it begins, checks the fence, writes the session's row and
// reserves the numbers of the batch's messages and events; in a second it
// inserts the records, notifies the listeners of the events and commits.
// Nothing of b is changed unless everything was stored.
func (s *Store) AppendBatch(ctx context.Context, sessionID string, b store.Batch) error {
	if err := checkBatch(sessionID, b); err != nil {
		return err
	}
	now := s.now()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("append: session %s: %w", sessionID, err)
	}
	defer conn.Release()
	defer endTx(ctx, conn)

	first := &pgx.Batch{}
	first.Queue("BEGIN")
	fc, fenced := store.FenceOf(ctx)
	if fenced {
		first.Queue(qCheckLease, fc.SessionID, fc.Owner, s.clockArg())
	}
	var created, updated time.Time
	var status protocol.SessionStatus
	if ns := b.NewSession; ns != nil {
		created = s.stamp(ns.CreatedAt)
		updated = created
		if !ns.UpdatedAt.IsZero() {
			updated = s.stamp(ns.UpdatedAt)
		}
		status = ns.Status
		if status == "" {
			status = protocol.StatusIdle
		}
		u := ns.Usage
		first.Queue(qInsertSession, ns.ID, ns.Title, ns.Workspace, ns.Model, string(status), ns.ParentID, ns.LastError,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens, ns.CostUSD, ns.ContextPercent, created, updated, ns.Agent)
	}
	updAt := s.stamp(now)
	if us := b.UpdateSession; us != nil {
		u := us.Usage
		first.Queue(qUpdateSession, us.ID, us.Title, us.Model, string(us.Status), us.LastError,
			u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens, us.CostUSD, us.ContextPercent, updAt)
	}
	if n := len(b.Dequeue); n > 0 {
		ids, contents := make([]int64, n), make([]string, n)
		for i, q := range b.Dequeue {
			ids[i], contents[i] = q.ID, q.Content
		}
		first.Queue(qDequeue, sessionID, ids, contents)
	}
	reserve := len(b.Messages) > 0 || len(b.Events) > 0
	if reserve {
		first.Queue(qReserve, sessionID, len(b.Messages), len(b.Events), s.stamp(now))
	}

	var updCount int64
	var updCreated time.Time
	var msgBase, evBase int64
	br := conn.SendBatch(ctx, first)
	err = func() error {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("append: session %s: %w", sessionID, err)
		}
		if fenced {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("append: %w", leaseError(fc.SessionID, err))
			}
		}
		if b.NewSession != nil {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("create session %s: %w", sessionID, err)
			}
		}
		if b.UpdateSession != nil {
			err := br.QueryRow().Scan(&updCount, &updCreated)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("update session: session %s: %w", sessionID, store.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("update session %s: %w", sessionID, err)
			}
		}
		if len(b.Dequeue) > 0 {
			tag, err := br.Exec()
			if err != nil {
				return fmt.Errorf("append: dequeue inputs: session %s: %w", sessionID, err)
			}
			if tag.RowsAffected() != int64(len(b.Dequeue)) {
				return fmt.Errorf("append: queued inputs of session %s: %w", sessionID, store.ErrQueueChanged)
			}
		}
		if reserve {
			err := br.QueryRow().Scan(&msgBase, &evBase)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("append: session %s: %w", sessionID, store.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("append: session %s: %w", sessionID, err)
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("append: session %s: %w", sessionID, cerr)
	}
	if err != nil {
		return err
	}

	second, evTimes, err := s.recordsBatch(sessionID, b, now, msgBase, evBase)
	if err != nil {
		return err
	}
	br = conn.SendBatch(ctx, second)
	for range second.Len() - 1 {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	if err == nil {
		err = commitTag(br.Exec())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sessionError("append", sessionID, err)
	}

	// Committed: tell the caller's values what the store decided.
	if us := b.UpdateSession; us != nil {
		us.UpdatedAt, us.CreatedAt, us.MessageCount = updAt, updCreated.UTC(), updCount+int64(len(b.Messages))
	}
	if ns := b.NewSession; ns != nil {
		ns.CreatedAt, ns.UpdatedAt, ns.Status, ns.MessageCount = created, updated, status, 0
	}
	for i, m := range b.Messages {
		m.Seq = msgBase + int64(i) + 1
	}
	for i, e := range b.Events {
		e.Sequence, e.Timestamp = evBase+int64(i)+1, evTimes[i]
	}
	return nil
}

// checkBatch refuses a batch whose parts name another session, or file
// changes without their result.
func checkBatch(sessionID string, b store.Batch) error {
	if ns := b.NewSession; ns != nil {
		if ns.ID == "" {
			return errors.New("create session: empty id")
		}
		if ns.ID != sessionID {
			return fmt.Errorf("append: new session %s in a batch of session %s", ns.ID, sessionID)
		}
	}
	if us := b.UpdateSession; us != nil && us.ID != sessionID {
		return fmt.Errorf("append: update of session %s in a batch of session %s", us.ID, sessionID)
	}
	for _, e := range b.Events {
		if e.SessionID != sessionID {
			return fmt.Errorf("append: event for session %s in a batch of session %s", e.SessionID, sessionID)
		}
	}
	_, err := changeSeqs(sessionID, b, 0)
	return err
}

// recordsBatch is the second round trip of AppendBatch: the records, with
// the numbers reserved after msgBase and evBase, the notice and COMMIT. It
// returns the events' timestamps as stored.
func (s *Store) recordsBatch(sessionID string, b store.Batch, now time.Time, msgBase, evBase int64) (*pgx.Batch, []time.Time, error) {
	q := &pgx.Batch{}
	nowMS := s.stamp(now)
	if n := len(b.Messages); n > 0 {
		seqs, roles, contents := make([]int64, n), make([]string, n), make([]string, n)
		for i, m := range b.Messages {
			stored := *m
			stored.Seq = msgBase + int64(i) + 1
			raw, err := json.Marshal(&stored)
			if err != nil {
				return nil, nil, fmt.Errorf("append message: session %s: %w", sessionID, err)
			}
			seqs[i], roles[i], contents[i] = stored.Seq, string(m.Role), string(raw)
		}
		q.Queue(qInsertMessages, sessionID, seqs, roles, contents, nowMS)
	}
	var times []time.Time
	if n := len(b.Events); n > 0 {
		// Events may point at the batch's messages: encode them with the
		// messages' new numbers, as they will read back.
		saved := make([]int64, len(b.Messages))
		for i, m := range b.Messages {
			saved[i], m.Seq = m.Seq, msgBase+int64(i)+1
		}
		defer func() {
			for i, m := range b.Messages {
				m.Seq = saved[i]
			}
		}()
		seqs, types, payloads := make([]int64, n), make([]string, n), make([]string, n)
		times = make([]time.Time, n)
		for i, e := range b.Events {
			stored := *e
			stored.Sequence = evBase + int64(i) + 1
			if stored.Timestamp.IsZero() {
				stored.Timestamp = now
			}
			stored.Timestamp = stored.Timestamp.UTC()
			raw, err := json.Marshal(&stored)
			if err != nil {
				return nil, nil, fmt.Errorf("append event: session %s: %w", sessionID, err)
			}
			seqs[i], types[i], payloads[i], times[i] = stored.Sequence, string(e.Type), string(raw), stored.Timestamp
		}
		q.Queue(qInsertEvents, sessionID, seqs, types, payloads, nowMS)
	}
	if n := len(b.Audit); n > 0 {
		cols := [5][]string{make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)}
		at := make([]time.Time, n)
		for i, e := range b.Audit {
			cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i] = e.SessionID, e.Tool, e.Summary, string(e.Decision), string(e.Source)
			at[i] = s.stamp(e.CreatedAt)
			if e.CreatedAt.IsZero() {
				at[i] = nowMS
			}
		}
		q.Queue(qInsertAudits, cols[0], cols[1], cols[2], cols[3], cols[4], at)
	}
	if c := b.Compaction; c != nil {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, nil, fmt.Errorf("append: compaction: %w", err)
		}
		q.Queue(qInsertCompaction, sessionID, c.ID, c.UpToSeq, string(raw), nowMS)
	}
	if len(b.Files) > 0 {
		// One row per path, the batch's last version of it.
		last := make(map[string]int, len(b.Files))
		for i, v := range b.Files {
			last[v.Path] = i
		}
		var paths, sums []string
		var mtimes, sizes []int64
		for i, v := range b.Files {
			if last[v.Path] != i {
				continue
			}
			paths, sums = append(paths, v.Path), append(sums, v.SHA256)
			mtimes, sizes = append(mtimes, v.ModTime.UnixNano()), append(sizes, v.Size)
		}
		q.Queue(qRecordFiles, sessionID, paths, mtimes, sizes, sums)
	}
	if err := queueHistory(q, sessionID, b, msgBase, nowMS); err != nil {
		return nil, nil, err
	}
	if len(b.Events) > 0 {
		q.Queue(qNotify, s.channel, notice(sessionID, evBase+int64(len(b.Events))))
	}
	q.Queue("COMMIT")
	return q, times, nil
}

// notice is the payload of an event notice: "SEQUENCE SESSION".
func notice(sessionID string, seq int64) string {
	return strconv.FormatInt(seq, 10) + " " + sessionID
}
