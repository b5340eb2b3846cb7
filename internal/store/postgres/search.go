package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Session search with PostgreSQL's text search (migration 0004): each
// message's tsvector is a stored column of messages with a GIN index; a
// query is the AND of its terms (store.SearchTerms), each the phrases
// store.SearchPhrases says, made by mx_claw_search_term with the index's
// words and stems (CJK characters each a word, migration 0006), or, for a
// CJK word, of its pairs of characters (migration 0007).
//
// The rules are the SQLite store's: a query matching at most
// store.SearchCandidates messages is ranked (ts_rank, negated so that
// lower is better, as bm25 is); one matching more gets the newest
// matches, unranked, read backwards along messages.n instead of ranking
// every match. Snippets are ts_headline's, with the matched words between
// ** marks, on one line, and … where the message goes on.

// Marks ts_headline puts around matched words, replaced by "**" once the
// snippet is placed in its text: characters of Unicode's private use
// area, which text does not hold, unlike "**".
const (
	markStart = "\ue000"
	markStop  = "\ue001"
)

// cjkMark is what mx_claw_search_cjk (migration 0006) puts around each
// CJK character of the text ts_headline reads, so that each is a word of
// its own, as in the index; it is taken out of the snippet.
const cjkMark = "\x1f"

// headlineOptions are ts_headline's: one fragment of about 16 words with
// the match in its middle (a fragment; without fragments ts_headline
// starts at the match), as the SQLite store's snippets are. Only the first 200,000
// characters are searched for it, as only they are indexed.
const headlineOptions = "StartSel=" + markStart + ", StopSel=" + markStop +
	", MaxWords=16, MinWords=10, ShortWord=0, MaxFragments=1"

// Search runs q against the full-text index of messages and returns the
// best hits, each with a snippet around the matched words.
func (s *Store) Search(ctx context.Context, q store.SearchQuery) ([]protocol.SearchHit, error) {
	terms := store.SearchTerms(q.Text)
	if len(terms) == 0 {
		return nil, store.ErrEmptyQuery
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	fail := func(err error) ([]protocol.SearchHit, error) { return nil, fmt.Errorf("search %q: %w", q.Text, err) }

	// The statements are planned for their arguments each time
	// (QueryExecModeExec, an unnamed statement): how common the words are
	// decides between the GIN index and reading messages in order, and a
	// plan cached for one query would be wrong for the next.
	args := []any{pgx.QueryExecModeExec}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args)-1)
	}
	// q is what messages must match: each term's phrases
	// (store.SearchPhrases), CJK words by their pairs of characters; hq is
	// what ts_headline marks in the snippet, the terms' words as the text
	// holds them.
	var match, marks []string
	for _, t := range terms {
		text, prefix := arg(t.Text), arg(t.Prefix)
		marks = append(marks, "mx_claw_search_term("+text+", "+prefix+")")
		for _, p := range store.SearchPhrases(t) {
			switch {
			case p.Bigrams:
				match = append(match, "phraseto_tsquery('mx_claw_search', "+arg(p.Text)+")")
			case p.Text == t.Text && p.Prefix == t.Prefix:
				match = append(match, "mx_claw_search_term("+text+", "+prefix+")")
			default:
				match = append(match, "mx_claw_search_term("+arg(p.Text)+", "+arg(p.Prefix)+")")
			}
		}
	}
	tsquery := `(SELECT ` + strings.Join(match, " && ") + ` AS q, ` + strings.Join(marks, " && ") + ` AS hq) qq`

	// How common is it? Counting stops past SearchCandidates.
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+tsquery+` CROSS JOIN messages m
WHERE m.search @@ qq.q LIMIT `+strconv.Itoa(store.SearchCandidates+1)+`) x`, args...).Scan(&n); err != nil {
		return fail(err)
	}
	if n == 0 {
		return []protocol.SearchHit{}, nil
	}
	from := ` FROM ` + tsquery + ` CROSS JOIN messages m`
	where := ` WHERE m.search @@ qq.q`
	if q.Workspace != "" {
		from += ` JOIN sessions ws ON ws.id = m.session_id`
		where += ` AND ws.workspace = ` + arg(q.Workspace)
	}
	var pick string
	if n > store.SearchCandidates {
		pick = `SELECT m.session_id, m.seq, m.role, m.content, m.n, 0::float8 AS rank, qq.hq` + from + where +
			` ORDER BY m.n DESC LIMIT ` + strconv.Itoa(limit)
	} else {
		pick = `SELECT m.session_id, m.seq, m.role, m.content, m.n, -ts_rank(m.search, qq.q)::float8 AS rank, qq.hq` +
			from + where + ` ORDER BY rank, m.n DESC LIMIT ` + strconv.Itoa(limit)
	}
	// The snippets are cut for the hits only; where each one starts in its
	// message, and how long it is, tell whether it needs a leading or a
	// trailing ….
	rows, err := s.pool.Query(ctx, `SELECT h.session_id, h.seq, h.role, h.rank, s.title, s.workspace, s.updated_at,
hl.snippet, strpos(b.body, hl.plain), length(hl.plain), length(b.body)
FROM (`+pick+`) h
JOIN sessions s ON s.id = h.session_id
CROSS JOIN LATERAL (SELECT left(mx_claw_search_text(h.content), 200000) AS body) b
CROSS JOIN LATERAL (SELECT ts_headline('mx_claw_search', mx_claw_search_cjk(b.body), h.hq, `+arg(headlineOptions)+`) AS snippet) hs
CROSS JOIN LATERAL (SELECT hs.snippet, replace(replace(replace(hs.snippet, `+arg(markStart)+`, ''), `+arg(markStop)+`, ''), `+arg(cjkMark)+`, '') AS plain) hl
ORDER BY h.rank, h.n DESC`, args...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	out := []protocol.SearchHit{}
	for rows.Next() {
		var h protocol.SearchHit
		var role, snip string
		var updated time.Time
		var at, size, total int
		if err := rows.Scan(&h.SessionID, &h.Seq, &role, &h.Rank, &h.Title, &h.Workspace, &updated,
			&snip, &at, &size, &total); err != nil {
			return fail(err)
		}
		h.Role, h.UpdatedAt, h.Snippet = protocol.Role(role), updated.UTC(), placeSnippet(snip, at, size, total)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return out, nil
}

// placeSnippet turns a headline into a snippet: its marks become "**", it
// goes on one line, and it gets … where the text goes on before (it
// starts at character at, counted from 1; 0 if unknown) or after it (it
// is size characters long, of total).
//
// Matched words that touch (the characters of a CJK word, each a word of
// the headline) are marked once.
func placeSnippet(headline string, at, size, total int) string {
	headline = strings.ReplaceAll(headline, cjkMark, "")
	headline = strings.ReplaceAll(headline, markStop+markStart, "")
	snip := strings.NewReplacer(markStart, "**", markStop, "**").Replace(store.OneLine(strings.TrimSpace(headline)))
	if at > 1 {
		snip = "…" + snip
	}
	if at > 0 && at-1+size < total {
		snip += "…"
	}
	return snip
}
