package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// The records of time travel and imports (store.History), written with a
// batch's messages in AppendBatch's transaction; see also search.go.
const (
	qInsertChanges = `INSERT INTO file_changes (session_id, turn_id, tool_call_id, message_seq, path,
before_mode, before_oid, before_size, after_mode, after_oid, after_size, created_at)
SELECT $1, x.turn_id, x.tool_call_id, x.message_seq, x.path,
x.before_mode, x.before_oid, x.before_size, x.after_mode, x.after_oid, x.after_size, $12
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::bigint[],
$9::bigint[], $10::text[], $11::bigint[])
AS x(turn_id, tool_call_id, message_seq, path, before_mode, before_oid, before_size, after_mode, after_oid, after_size)`
	qRevertChanges = `UPDATE file_changes SET reverted_at = $3 WHERE session_id = $1 AND id = ANY($2::bigint[])`
	qInsertRewind  = `INSERT INTO rewinds (session_id, to_seq, from_seq, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (session_id, from_seq) DO UPDATE SET to_seq = excluded.to_seq, created_at = excluded.created_at`
	qInsertSource = `INSERT INTO session_sources (source, source_id, session_id, path, created_at)
VALUES ($1, $2, $3, $4, $5)`
)

// changeSeqs returns the Seq each of the batch's call changes is stored
// with: its result's among the batch's messages (numbered after msgBase),
// or the Seq of a result stored before. A result that is neither is an
// error, found before anything is written.
func changeSeqs(sessionID string, b store.Batch, msgBase int64) ([]int64, error) {
	if len(b.Changes) == 0 {
		return nil, nil
	}
	index := make(map[*protocol.Message]int, len(b.Messages))
	for i, m := range b.Messages {
		index[m] = i
	}
	seqs := make([]int64, len(b.Changes))
	for i, cc := range b.Changes {
		switch j, ok := index[cc.Result]; {
		case cc.Result == nil:
			return nil, fmt.Errorf("append: session %s: file changes without a stored result", sessionID)
		case ok:
			seqs[i] = msgBase + int64(j) + 1
		case cc.Result.Seq != 0:
			seqs[i] = cc.Result.Seq
		default:
			return nil, fmt.Errorf("append: session %s: file changes without a stored result", sessionID)
		}
	}
	return seqs, nil
}

// queueHistory queues the batch's file changes, reverts, rewind and source.
func queueHistory(q *pgx.Batch, sessionID string, b store.Batch, msgBase int64, now time.Time) error {
	seqs, err := changeSeqs(sessionID, b, msgBase)
	if err != nil {
		return err
	}
	var turns, calls, paths, beforeOIDs, afterOIDs []string
	var msgSeqs, beforeModes, beforeSizes, afterModes, afterSizes []int64
	for i, cc := range b.Changes {
		for _, c := range cc.Changes {
			turns, calls, paths = append(turns, cc.Result.TurnID), append(calls, cc.Result.ToolCallID), append(paths, c.Path)
			msgSeqs = append(msgSeqs, seqs[i])
			beforeModes, beforeOIDs, beforeSizes = append(beforeModes, int64(c.Before.Mode)), append(beforeOIDs, c.Before.OID), append(beforeSizes, c.Before.Size)
			afterModes, afterOIDs, afterSizes = append(afterModes, int64(c.After.Mode)), append(afterOIDs, c.After.OID), append(afterSizes, c.After.Size)
		}
	}
	if len(paths) > 0 {
		q.Queue(qInsertChanges, sessionID, turns, calls, msgSeqs, paths,
			beforeModes, beforeOIDs, beforeSizes, afterModes, afterOIDs, afterSizes, now)
	}
	if len(b.Reverted) > 0 {
		q.Queue(qRevertChanges, sessionID, b.Reverted, now)
	}
	if r := b.Rewind; r != nil {
		q.Queue(qInsertRewind, sessionID, r.ToSeq, r.FromSeq, now)
	}
	if src := b.Source; src != nil {
		q.Queue(qInsertSource, src.Source, src.SourceID, sessionID, src.Path, now)
	}
	return nil
}

// Changes returns the session's file changes stored with messages after
// afterSeq, oldest first.
func (s *Store) Changes(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.ChangeRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, turn_id, tool_call_id, message_seq, path,
before_mode, before_oid, before_size, after_mode, after_oid, after_size, reverted_at IS NOT NULL, created_at
FROM file_changes WHERE session_id = $1 AND message_seq > $2 ORDER BY message_seq, id`, sessionID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.ChangeRecord{}
	for rows.Next() {
		r := protocol.ChangeRecord{SessionID: sessionID}
		var beforeMode, afterMode int64
		if err := rows.Scan(&r.ID, &r.TurnID, &r.ToolCallID, &r.MessageSeq, &r.Path,
			&beforeMode, &r.Before.OID, &r.Before.Size, &afterMode, &r.After.OID, &r.After.Size,
			&r.Reverted, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
		}
		r.Before.Mode, r.After.Mode, r.CreatedAt = uint32(beforeMode), uint32(afterMode), r.CreatedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
	}
	return out, nil
}

// Rewinds returns the session's conversation rewinds, oldest first.
func (s *Store) Rewinds(ctx context.Context, sessionID string) ([]protocol.Rewind, error) {
	rows, err := s.pool.Query(ctx, `SELECT to_seq, from_seq, created_at FROM rewinds
WHERE session_id = $1 ORDER BY created_at, from_seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("rewinds: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Rewind{}
	for rows.Next() {
		var r protocol.Rewind
		if err := rows.Scan(&r.ToSeq, &r.FromSeq, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("rewinds: session %s: %w", sessionID, err)
		}
		r.CreatedAt = r.CreatedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rewinds: session %s: %w", sessionID, err)
	}
	return out, nil
}

// DeleteSession removes a session and what is stored with it, in one
// transaction (see store.History): the session's row goes with everything
// that refers to it, then the rows that name it without a foreign key
// (its lease, its session grants, its quarantined rows). The session's
// row and its lease are locked first, so no append of another worker
// commits in between, and a lease a live owner holds refuses the delete.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var one int
	err = tx.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("delete session %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	var owner, boot string
	var expires time.Time
	var live bool
	err = tx.QueryRow(ctx, `SELECT owner, boot_id, expires_at, expires_at > COALESCE($2::timestamptz, statement_timestamp())
FROM leases WHERE session_id = $1 FOR UPDATE`, id, s.clockArg()).Scan(&owner, &boot, &expires, &live)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return fmt.Errorf("delete session %s: %w", id, err)
	case live && !s.holderGone(owner, boot):
		return &store.LeaseHeldError{SessionID: id, Owner: owner, ExpiresAt: expires.UTC()}
	}
	for _, q := range []string{
		`DELETE FROM sessions WHERE id = $1`,
		`DELETE FROM leases WHERE session_id = $1`,
		`DELETE FROM permission_grants WHERE scope = 'session:' || $1`,
		`DELETE FROM quarantine WHERE session_id = $1`,
	} {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// ImportedSession returns the session imported from source's sourceID, or
// an error wrapping store.ErrNotFound.
func (s *Store) ImportedSession(ctx context.Context, source, sourceID string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT session_id FROM session_sources WHERE source = $1 AND source_id = $2`,
		source, sourceID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("imported session %s %s: %w", source, sourceID, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("imported session %s %s: %w", source, sourceID, err)
	}
	return id, nil
}

// CheckpointObjects returns the blob ids the file changes of the
// workspace's sessions refer to.
func (s *Store) CheckpointObjects(ctx context.Context, workspace string) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.before_oid, c.after_oid FROM file_changes c
JOIN sessions s ON s.id = c.session_id WHERE s.workspace = $1`, workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint objects of %s: %w", workspace, err)
	}
	defer rows.Close()
	out := make(map[string]bool)
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return nil, fmt.Errorf("checkpoint objects of %s: %w", workspace, err)
		}
		if a != "" {
			out[a] = true
		}
		if b != "" {
			out[b] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checkpoint objects of %s: %w", workspace, err)
	}
	return out, nil
}
