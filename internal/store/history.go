package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// History is the part of the store that time travel and the session
// library need (issue 16): the file changes of tool calls, conversation
// rewinds, full-text search, deletion and the origin of imported sessions.
// Writes that go with a turn's records (changes, reverts, rewinds, sources)
// travel in a Batch, so they are stored in one transaction with the
// messages and events they belong to.
type History interface {
	// Changes returns the session's recorded file changes stored with a
	// message whose Seq is greater than afterSeq, oldest first.
	Changes(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.ChangeRecord, error)
	// Rewinds returns the session's conversation rewinds, oldest first.
	Rewinds(ctx context.Context, sessionID string) ([]protocol.Rewind, error)
	// Search finds messages of every session (or of one workspace) by the
	// words of a query, best first.
	Search(ctx context.Context, q SearchQuery) ([]protocol.SearchHit, error)
	// DeleteSession removes a session and everything stored with it: its
	// transcript, events, approvals, queued input, file versions, file
	// changes, rewinds, search index rows, quarantined rows and its
	// session grants. The
	// permission audit is kept. A session whose lease a live owner holds
	// is refused with *LeaseHeldError; a missing one is ErrNotFound.
	DeleteSession(ctx context.Context, id string) error
	// ImportedSession returns the id of the session imported from source's
	// session sourceID, or ErrNotFound.
	ImportedSession(ctx context.Context, source, sourceID string) (string, error)
	// CheckpointObjects returns the blob ids the file changes of the
	// workspace's sessions refer to: what a checkpoint store must keep.
	CheckpointObjects(ctx context.Context, workspace string) (map[string]bool, error)
}

// CallChanges are the file changes of one tool call. They are stored with
// the call's result, which must be among the batch's Messages: each change
// is recorded with its Seq, TurnID and ToolCallID.
type CallChanges struct {
	Result  *protocol.Message
	Changes []protocol.FileChange
}

// SessionSource records where an imported session came from.
type SessionSource struct {
	// Source names the other agent ("claude", "codex", ...).
	Source string
	// SourceID is that agent's id of the session.
	SourceID string
	// Path is the file or directory it was read from.
	Path string
}

// SearchQuery is what Search looks for.
type SearchQuery struct {
	// Text is the query: words that must all occur (in any order, any
	// form that stems the same); "word*" matches a prefix; "a phrase" in
	// double quotes matches the words in order.
	Text string
	// Workspace, if set, keeps only sessions of that workspace.
	Workspace string
	// Limit caps the hits; 0 means 20.
	Limit int
}

// SearchCandidates is the most matches Search ranks; a query with more
// gets the newest matches, unranked. Both stores keep this rule: ranking
// needs every match read, while the newest come straight from an index.
const SearchCandidates = 2000

// ErrEmptyQuery is returned by Search for a query with no words.
var ErrEmptyQuery = errors.New("the search query has no words")

// appendHistoryTx stores the batch's file changes, reverts, rewind and
// source within tx; the batch's messages already have their Seq.
func (s *SQLite) appendHistoryTx(ctx context.Context, tx *sql.Tx, sessionID string, b Batch, now time.Time) error {
	for _, cc := range b.Changes {
		if cc.Result == nil || cc.Result.Seq == 0 {
			return fmt.Errorf("append: session %s: file changes without a stored result", sessionID)
		}
		for _, c := range cc.Changes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_changes (session_id, turn_id, tool_call_id,
message_seq, path, before_mode, before_oid, before_size, after_mode, after_oid, after_size, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sessionID, cc.Result.TurnID, cc.Result.ToolCallID, cc.Result.Seq,
				c.Path, c.Before.Mode, c.Before.OID, c.Before.Size, c.After.Mode, c.After.OID, c.After.Size, ms(now)); err != nil {
				return sessionError("append: file change "+c.Path, sessionID, err)
			}
		}
	}
	for _, id := range b.Reverted {
		if _, err := tx.ExecContext(ctx, `UPDATE file_changes SET reverted_at = ? WHERE id = ? AND session_id = ?`,
			ms(now), id, sessionID); err != nil {
			return fmt.Errorf("append: revert change %d: %w", id, err)
		}
	}
	if r := b.Rewind; r != nil {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO rewinds (session_id, to_seq, from_seq, created_at)
VALUES (?, ?, ?, ?)`, sessionID, r.ToSeq, r.FromSeq, ms(now)); err != nil {
			return sessionError("append: rewind", sessionID, err)
		}
	}
	if src := b.Source; src != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_sources (source, source_id, session_id, path, created_at)
VALUES (?, ?, ?, ?, ?)`, src.Source, src.SourceID, sessionID, src.Path, ms(now)); err != nil {
			return sessionError("append: source of imported session", sessionID, err)
		}
	}
	return nil
}

// Changes returns the session's file changes stored with messages after
// afterSeq, oldest first.
func (s *SQLite) Changes(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.ChangeRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, turn_id, tool_call_id, message_seq, path,
before_mode, before_oid, before_size, after_mode, after_oid, after_size, reverted_at, created_at
FROM file_changes WHERE session_id = ? AND message_seq > ? ORDER BY message_seq, id`, sessionID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.ChangeRecord{}
	for rows.Next() {
		r := protocol.ChangeRecord{SessionID: sessionID}
		var reverted, created int64
		if err := rows.Scan(&r.ID, &r.TurnID, &r.ToolCallID, &r.MessageSeq, &r.Path,
			&r.Before.Mode, &r.Before.OID, &r.Before.Size, &r.After.Mode, &r.After.OID, &r.After.Size,
			&reverted, &created); err != nil {
			return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
		}
		r.Reverted, r.CreatedAt = reverted != 0, fromMS(created)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("file changes: session %s: %w", sessionID, err)
	}
	return out, nil
}

// Rewinds returns the session's conversation rewinds, oldest first.
func (s *SQLite) Rewinds(ctx context.Context, sessionID string) ([]protocol.Rewind, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT to_seq, from_seq, created_at FROM rewinds
WHERE session_id = ? ORDER BY created_at, from_seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("rewinds: session %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []protocol.Rewind{}
	for rows.Next() {
		var r protocol.Rewind
		var created int64
		if err := rows.Scan(&r.ToSeq, &r.FromSeq, &created); err != nil {
			return nil, fmt.Errorf("rewinds: session %s: %w", sessionID, err)
		}
		r.CreatedAt = fromMS(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Search runs q against the full-text index of messages and returns the
// best hits, each with a snippet around the matched words.
//
// Hits are ranked by bm25, unless the query matches more than
// SearchCandidates messages: then they are the newest matches. bm25 needs
// the number of messages each word is in, which FTS5 counts by reading
// every match — 4 s for a word in most of 500,000 messages — while the
// newest matches come straight from the index in rowid order. Snippets
// are cut from the hits' text here (snippet.go), not by FTS5's snippet(),
// which needs a second MATCH per hit (25 ms a hit for a prefix query).
func (s *SQLite) Search(ctx context.Context, q SearchQuery) ([]protocol.SearchHit, error) {
	match := MatchExpression(q.Text)
	if match == "" {
		return nil, ErrEmptyQuery
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	fail := func(err error) ([]protocol.SearchHit, error) { return nil, fmt.Errorf("search %q: %w", q.Text, err) }
	// How common is it? Counting stops past SearchCandidates.
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM messages_fts
WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?)`, match, SearchCandidates+1).Scan(&n); err != nil {
		return fail(err)
	}
	if n == 0 {
		return []protocol.SearchHit{}, nil
	}
	from := ` FROM messages_fts f WHERE messages_fts MATCH ?1`
	args := []any{match}
	if q.Workspace != "" {
		from = ` FROM messages_fts f JOIN sessions s ON s.id = f.session_id WHERE messages_fts MATCH ?1 AND s.workspace = ?2`
		args = append(args, q.Workspace)
	}
	var pick string
	if n > SearchCandidates {
		pick = `SELECT f.rowid, 0` + from + ` ORDER BY f.rowid DESC LIMIT ` + strconv.Itoa(limit)
	} else {
		pick = `SELECT f.rowid, bm25(messages_fts) AS r` + from + ` ORDER BY r LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := s.r.QueryContext(ctx, pick, args...)
	if err != nil {
		return fail(err)
	}
	type ranked struct {
		id   int64
		rank float64
	}
	var top []ranked
	for rows.Next() {
		var r ranked
		if err := rows.Scan(&r.id, &r.rank); err != nil {
			rows.Close()
			return fail(err)
		}
		top = append(top, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(top) == 0 {
		return []protocol.SearchHit{}, nil
	}
	// The hits' texts are read by rowid, without a second MATCH: for a
	// prefix query each MATCH expands the prefix again (25 ms a hit).
	in := make([]string, len(top))
	detailArgs := make([]any, len(top))
	for i, r := range top {
		in[i] = "?"
		detailArgs[i] = r.id
	}
	// Snippets are cut from the message's own text, not from the index's
	// copy of it (CJK characters spaced apart, full-width forms folded).
	rows, err = s.r.QueryContext(ctx, `SELECT f.rowid, f.session_id, f.seq, f.role, `+messageTextSQL+`, s.title, s.workspace, s.updated_at
FROM messages_fts f JOIN sessions s ON s.id = f.session_id
JOIN messages m ON m.session_id = f.session_id AND m.seq = f.seq
WHERE f.rowid IN (`+strings.Join(in, ", ")+`)`, detailArgs...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	terms := snippetTerms(q.Text)
	byID := make(map[int64]protocol.SearchHit, len(top))
	for rows.Next() {
		var h protocol.SearchHit
		var id, updated int64
		var role, body string
		if err := rows.Scan(&id, &h.SessionID, &h.Seq, &role, &body, &h.Title, &h.Workspace, &updated); err != nil {
			return fail(err)
		}
		h.Role, h.UpdatedAt, h.Snippet = protocol.Role(role), fromMS(updated), snippet(body, terms, 16)
		byID[id] = h
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	out := make([]protocol.SearchHit, 0, len(top))
	for _, r := range top {
		if h, ok := byID[r.id]; ok {
			h.Rank = r.rank
			out = append(out, h)
		}
	}
	return out, nil
}

// messageTextSQL is the text of message m that search indexes (as the
// triggers of migrations 0010, 0012 and 0013 take it, before
// mx_claw_search_body): its content, and the names and arguments of the
// tools it calls; a row that is not JSON is taken as it is.
const messageTextSQL = `CASE WHEN json_valid(m.content) THEN
    coalesce(json_extract(m.content, '$.content'), '') || coalesce((
        SELECT ' ' || group_concat(
            coalesce(json_extract(value, '$.name'), '') || ' ' ||
            coalesce(json_extract(value, '$.arguments'), ''), ' ')
        FROM json_each(m.content, '$.tool_calls')), '')
ELSE m.content END`

// SearchTerm is one term of a search query: a word, or the words of a
// "quoted phrase", that must occur in this order.
type SearchTerm struct {
	// Text is the term's text, without quotes.
	Text string
	// Prefix makes the term's last word a prefix ("word*").
	Prefix bool
}

// SearchTerms splits a person's query into its terms, as both stores read
// it: words must all occur; a "quoted phrase" stays a phrase (an
// unterminated one runs to the end); a trailing * asks for a prefix.
// Double quotes inside a word are dropped; a term with nothing else is
// left out. The ideographic space (U+3000, typed by Japanese and Chinese
// input methods) separates words as a space does.
func SearchTerms(text string) []SearchTerm {
	text = strings.ReplaceAll(text, "\u3000", " ")
	var terms []SearchTerm
	add := func(t string, prefix bool) {
		t = strings.TrimSpace(strings.ReplaceAll(t, `"`, ""))
		if t != "" {
			terms = append(terms, SearchTerm{Text: t, Prefix: prefix})
		}
	}
	for len(text) > 0 {
		text = strings.TrimLeft(text, " \t\r\n")
		if text == "" {
			break
		}
		if text[0] == '"' {
			end := strings.IndexByte(text[1:], '"')
			if end < 0 {
				add(text[1:], false)
				break
			}
			add(text[1:1+end], false)
			text = text[2+end:]
			continue
		}
		word := text
		if i := strings.IndexAny(text, " \t\r\n"); i >= 0 {
			word, text = text[:i], text[i:]
		} else {
			text = ""
		}
		prefix := strings.HasSuffix(word, "*")
		add(strings.TrimRight(word, "*"), prefix)
	}
	return terms
}

// MatchExpression turns a person's query into an FTS5 match expression in
// which every term (see SearchTerms) is a quoted string, so nothing in the
// query is read as FTS5 syntax, made of the words the index holds
// (SearchPhrases: a CJK word becomes the phrase of its pairs of
// characters). It
// returns "" for a query with no words.
func MatchExpression(text string) string {
	var out []string
	for _, t := range SearchTerms(text) {
		for _, p := range SearchPhrases(t) {
			phrase := p.Text
			if !p.Bigrams {
				phrase = SearchIndexText(phrase)
			}
			phrase = `"` + phrase + `"`
			if p.Prefix {
				phrase += "*"
			}
			out = append(out, phrase)
		}
	}
	return strings.Join(out, " ")
}

// DeleteSession removes a session and what is stored with it, in one
// transaction (see History.DeleteSession).
func (s *SQLite) DeleteSession(ctx context.Context, id string) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	defer rollback(tx)
	var owner string
	var expires int64
	err = tx.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE session_id = ?`, id).Scan(&owner, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("delete session %s: %w", id, err)
	case expires > ms(s.now()) && !s.ownerGone(owner):
		return &LeaseHeldError{SessionID: id, Owner: owner, ExpiresAt: fromMS(expires)}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete session %s: %w", id, ErrNotFound)
	}
	// Rows that name the session without a foreign key.
	for _, q := range []string{
		`DELETE FROM leases WHERE session_id = ?`,
		`DELETE FROM permission_grants WHERE scope = 'session:' || ?`,
		`DELETE FROM quarantine WHERE session_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// ImportedSession returns the session imported from source's sourceID.
func (s *SQLite) ImportedSession(ctx context.Context, source, sourceID string) (string, error) {
	var id string
	err := s.r.QueryRowContext(ctx, `SELECT session_id FROM session_sources WHERE source = ? AND source_id = ?`,
		source, sourceID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("imported session %s %s: %w", source, sourceID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("imported session %s %s: %w", source, sourceID, err)
	}
	return id, nil
}

// CheckpointObjects returns the blob ids the file changes of the
// workspace's sessions refer to.
func (s *SQLite) CheckpointObjects(ctx context.Context, workspace string) (map[string]bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.before_oid, c.after_oid FROM file_changes c
JOIN sessions s ON s.id = c.session_id WHERE s.workspace = ?`, workspace)
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
	return out, rows.Err()
}
