package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The statements of the per-step path (append messages and events, update
// the session, record decisions and file versions) and of replay, prepared
// once at Open. The driver keeps no statement cache, so anything run per
// step is prepared here; the rest is run as text.
const (
	qBumpSession = `UPDATE sessions SET message_count = message_count + ?, updated_at = ?
WHERE id = ?`
	// A number set aside in the quarantine is never given again.
	qNextMessageSeq = `SELECT MAX(
COALESCE((SELECT MAX(seq) FROM messages WHERE session_id = ?1), 0),
COALESCE((SELECT MAX(seq) FROM quarantine WHERE session_id = ?1 AND tbl = 'messages'), 0)) + 1`
	qInsertMessage = `INSERT INTO messages (session_id, seq, role, content, created_at)
VALUES (?, ?, ?, ?, ?)`
	qNextEventSeq = `SELECT MAX(
COALESCE((SELECT MAX(sequence) FROM events WHERE session_id = ?1), 0),
COALESCE((SELECT MAX(seq) FROM quarantine WHERE session_id = ?1 AND tbl = 'events'), 0)) + 1`
	qInsertEvent = `INSERT INTO events (session_id, sequence, type, payload, created_at)
VALUES (?, ?, ?, ?, ?)`
	qUpdateSession = `UPDATE sessions SET title = ?, model = ?, status = ?,
last_error = ?, input_tokens = ?, output_tokens = ?, cached_tokens = ?,
reasoning_tokens = ?, updated_at = ?, cost_usd = ?, context_percent = ?
WHERE id = ? RETURNING message_count, created_at`
	qInsertAudit = `INSERT INTO permission_audit
(session_id, tool, summary, decision, source, created_at) VALUES (?, ?, ?, ?, ?, ?)`

	qMessages = `SELECT seq, content FROM messages
WHERE session_id = ? AND seq > ? ORDER BY seq`
	qEvents = `SELECT sequence, payload FROM events
WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`
	qGetSession = `SELECT ` + sessionColumns + ` FROM sessions WHERE id = ?`
)

type stmts struct {
	bumpSession, nextMessageSeq, insertMessage *sql.Stmt // writer
	nextEventSeq, insertEvent                  *sql.Stmt // writer
	updateSession, insertAudit, recordFile     *sql.Stmt // writer
	leaseOf                                    *sql.Stmt // writer
	all                                        []*sql.Stmt

	// The reader's statements are prepared in the background (see
	// startReader): a process's first read comes after its first write.
	readerReady                  chan struct{} // closed once they are prepared or failed
	readerErr                    error
	messages, events, getSession *sql.Stmt
	readerAll                    []*sql.Stmt
}

// prepareWriter prepares the writer's statements.
func (st *stmts) prepareWriter(ctx context.Context, w *sql.DB) error {
	return prepareAll(ctx, w, &st.all, []stmtSpec{
		{&st.bumpSession, qBumpSession},
		{&st.nextMessageSeq, qNextMessageSeq},
		{&st.insertMessage, qInsertMessage},
		{&st.nextEventSeq, qNextEventSeq},
		{&st.insertEvent, qInsertEvent},
		{&st.updateSession, qUpdateSession},
		{&st.insertAudit, qInsertAudit},
		{&st.recordFile, qRecordFile},
		{&st.leaseOf, qLeaseOf},
	})
}

// startReader prepares the reader's statements in the background. Opening
// the first reader connection parses the whole schema; this way it
// happens while the process does its first writes.
func (st *stmts) startReader(r *sql.DB) {
	st.readerReady = make(chan struct{})
	go func() {
		defer close(st.readerReady)
		st.readerErr = prepareAll(context.Background(), r, &st.readerAll, []stmtSpec{
			{&st.messages, qMessages},
			{&st.events, qEvents},
			{&st.getSession, qGetSession},
		})
	}()
}

// reader waits for the reader's statements.
func (st *stmts) reader() (*stmts, error) {
	<-st.readerReady
	return st, st.readerErr
}

type stmtSpec struct {
	dst **sql.Stmt
	q   string
}

// prepareAll prepares specs on db, adding each statement to *all; on an
// error the ones already prepared are closed.
func prepareAll(ctx context.Context, db *sql.DB, all *[]*sql.Stmt, specs []stmtSpec) error {
	for _, p := range specs {
		stmt, err := db.PrepareContext(ctx, p.q)
		if err != nil {
			for _, s := range *all {
				s.Close()
			}
			*all = nil
			return fmt.Errorf("prepare %q: %w", p.q, err)
		}
		*p.dst = stmt
		*all = append(*all, stmt)
	}
	return nil
}

// close closes the statements, once the reader's are prepared.
func (st *stmts) close() error {
	if st.readerReady != nil {
		<-st.readerReady
	}
	var errs []error
	for _, s := range append(st.all, st.readerAll...) {
		errs = append(errs, s.Close())
	}
	st.all, st.readerAll = nil, nil
	return errors.Join(errs...)
}
