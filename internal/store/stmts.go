package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The statements of the per-step path (append a message, append an event)
// and of replay, prepared once at Open. The driver keeps no statement cache,
// so anything run per step is prepared here; the rest is run as text.
const (
	qBumpSession = `UPDATE sessions SET message_count = message_count + 1, updated_at = ?
WHERE id = ?`
	qNextMessageSeq = `SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?`
	qInsertMessage  = `INSERT INTO messages (session_id, seq, role, content, created_at)
VALUES (?, ?, ?, ?, ?)`
	qNextEventSeq = `SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE session_id = ?`
	qInsertEvent  = `INSERT INTO events (session_id, sequence, type, payload, created_at)
VALUES (?, ?, ?, ?, ?)`

	qMessages = `SELECT seq, content FROM messages
WHERE session_id = ? AND seq > ? ORDER BY seq`
	qEvents = `SELECT sequence, payload FROM events
WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`
	qGetSession = `SELECT ` + sessionColumns + ` FROM sessions WHERE id = ?`
)

type stmts struct {
	bumpSession, nextMessageSeq, insertMessage *sql.Stmt // writer
	nextEventSeq, insertEvent                  *sql.Stmt // writer
	messages, events, getSession               *sql.Stmt // reader
	all                                        []*sql.Stmt
}

func (st *stmts) prepare(ctx context.Context, w, r *sql.DB) error {
	for _, p := range []struct {
		db  *sql.DB
		dst **sql.Stmt
		q   string
	}{
		{w, &st.bumpSession, qBumpSession},
		{w, &st.nextMessageSeq, qNextMessageSeq},
		{w, &st.insertMessage, qInsertMessage},
		{w, &st.nextEventSeq, qNextEventSeq},
		{w, &st.insertEvent, qInsertEvent},
		{r, &st.messages, qMessages},
		{r, &st.events, qEvents},
		{r, &st.getSession, qGetSession},
	} {
		stmt, err := p.db.PrepareContext(ctx, p.q)
		if err != nil {
			st.close()
			return fmt.Errorf("prepare %q: %w", p.q, err)
		}
		*p.dst = stmt
		st.all = append(st.all, stmt)
	}
	return nil
}

func (st *stmts) close() error {
	var errs []error
	for _, s := range st.all {
		errs = append(errs, s.Close())
	}
	st.all = nil
	return errors.Join(errs...)
}
