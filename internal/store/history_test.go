package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestFileChangesRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	res := &protocol.Message{Role: protocol.RoleTool, Content: "ok", ToolCallID: "c1", TurnID: "t1"}
	change := protocol.FileChange{Path: "a/b.txt",
		Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "1111", Size: 3},
		After:  protocol.FileState{Mode: protocol.ModeRegular | 0o755, OID: "2222", Size: 4}}
	gone := protocol.FileChange{Path: "c.txt", Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "3333"}}
	if err := s.AppendBatch(ctx, "s1", Batch{Messages: []*protocol.Message{
		{Role: protocol.RoleUser, Content: "go"}, res,
	}, Changes: []CallChanges{{Result: res, Changes: []protocol.FileChange{change, gone}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Changes(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("changes = %+v", got)
	}
	if g := got[0]; g.FileChange != change || g.MessageSeq != res.Seq || g.TurnID != "t1" || g.ToolCallID != "c1" || g.Reverted {
		t.Errorf("change = %+v", g)
	}
	if got[1].Kind() != protocol.ChangeDeleted || got[0].Kind() != protocol.ChangeModified {
		t.Errorf("kinds = %s, %s", got[1].Kind(), got[0].Kind())
	}
	if later, _ := s.Changes(ctx, "s1", res.Seq); len(later) != 0 {
		t.Errorf("changes after %d = %+v", res.Seq, later)
	}
	// A revert is stored with what reports it.
	note := &protocol.Message{Role: protocol.RoleSystem, Content: "undone"}
	if err := s.AppendBatch(ctx, "s1", Batch{Messages: []*protocol.Message{note}, Reverted: []int64{got[0].ID}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Changes(ctx, "s1", 0)
	if !got[0].Reverted || got[1].Reverted {
		t.Errorf("after revert: %+v", got)
	}
	objs, err := s.CheckpointObjects(ctx, "/w")
	if err != nil || len(objs) != 3 || !objs["1111"] || !objs["3333"] {
		t.Errorf("objects = %v, %v", objs, err)
	}
	// Changes need a stored result.
	err = s.AppendBatch(ctx, "s1", Batch{Changes: []CallChanges{{Result: &protocol.Message{}, Changes: []protocol.FileChange{change}}}})
	if err == nil {
		t.Error("changes without a result were stored")
	}
}

func TestRewinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	if err := s.AppendBatch(ctx, "s1", Batch{Rewind: &protocol.Rewind{ToSeq: 4, FromSeq: 9}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Rewinds(ctx, "s1")
	if err != nil || len(got) != 1 || got[0].ToSeq != 4 || got[0].FromSeq != 9 || got[0].CreatedAt.IsZero() {
		t.Fatalf("rewinds = %+v, %v", got, err)
	}
	if err := s.AppendBatch(ctx, "nope", Batch{Rewind: &protocol.Rewind{ToSeq: 1, FromSeq: 2}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("rewind of a missing session: %v", err)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	for _, id := range []string{"s1", "s2"} {
		newSession(t, s, id)
	}
	other := &protocol.Session{ID: "s3", Workspace: "/elsewhere"}
	if err := s.CreateSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	add := func(id string, msgs ...*protocol.Message) {
		t.Helper()
		if err := s.AppendBatch(ctx, id, Batch{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	add("s1",
		&protocol.Message{Role: protocol.RoleSystem, Content: "You are a coding agent; zebra."},
		&protocol.Message{Role: protocol.RoleUser, Content: "Please fix the flaky parser tests"},
		&protocol.Message{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "c", Name: "run_command", Arguments: `{"command":"go test ./parser"}`}}},
		&protocol.Message{Role: protocol.RoleTool, ToolCallID: "c", Content: "--- FAIL: TestParse (0.01s): quokka not found"})
	add("s2", &protocol.Message{Role: protocol.RoleUser, Content: "write a parser for TOML"})
	add("s3", &protocol.Message{Role: protocol.RoleUser, Content: "parser again, elsewhere"})
	// A row that is not JSON (an old or damaged one) is indexed as text.
	if _, err := s.w.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('s2', 99, 'user', 'raw walrus text', 0)`); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		query, workspace string
		want             []string // session:seq in rank order, or only the set when unordered
	}{
		{query: "quokka", want: []string{"s1:4"}},      // a word of a tool result
		{query: "flaky", want: []string{"s1:2"}},       // a word of a user message
		{query: "test"},                                // "tests" and "test" stem alike: hits in any order
		{query: "run_command", want: []string{"s1:3"}}, // a tool call's name and arguments
		{query: "zebra"},                               // system prompts are not indexed
		{query: "walrus", want: []string{"s2:99"}},     // not JSON
		{query: "parser", workspace: "/elsewhere", want: []string{"s3:1"}},
		{query: `"parser for"`, want: []string{"s2:1"}}, // a phrase
		{query: "quok*", want: []string{"s1:4"}},        // a prefix
		{query: `fix AND OR NEAR( "`, want: []string{}}, // syntax words are plain words
	}
	for _, c := range cases {
		hits, err := s.Search(ctx, SearchQuery{Text: c.query, Workspace: c.workspace})
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.SessionID+":"+itoa(h.Seq))
			if h.Snippet == "" || h.Title == "" && h.SessionID != "s3" {
				t.Errorf("%q: hit %+v", c.query, h)
			}
		}
		if c.query == "test" {
			// Order depends on bm25; the set is what matters.
			if len(got) == 0 {
				t.Errorf("%q: no hits", c.query)
			}
			continue
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%q in %q: hits %v, want %v", c.query, c.workspace, got, c.want)
		}
	}
	hits, _ := s.Search(ctx, SearchQuery{Text: "quokka"})
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "**quokka**") || hits[0].Role != protocol.RoleTool {
		t.Errorf("snippet = %+v", hits)
	}
	if _, err := s.Search(ctx, SearchQuery{Text: `  " "  `}); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("empty query: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestMatchExpression(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"foo bar":           `"foo" "bar"`,
		`"a b" c*`:          `"a b" "c"*`,
		`unterminated "x y`: `"unterminated" "x y"`,
		`NEAR(a b)`:         `"NEAR(a" "b)"`,
		`***`:               ``,
		`  `:                ``,
		`x"y`:               `"xy"`,
	} {
		if got := MatchExpression(in); got != want {
			t.Errorf("MatchExpression(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDeleteSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newTestClock()
	s := openTest(t, WithClock(clock.Now), WithProcessAlive(func(int) bool { return true }))
	newSession(t, s, "s1")
	newSession(t, s, "keep")
	res := &protocol.Message{Role: protocol.RoleTool, Content: "deleted words", ToolCallID: "c"}
	if err := s.AppendBatch(ctx, "s1", Batch{
		Messages: []*protocol.Message{{Role: protocol.RoleUser, Content: "doomed words"}, res},
		Events:   []*protocol.Event{{Type: protocol.EventTurnStarted, SessionID: "s1"}},
		Files:    []protocol.FileVersion{{Path: "/w/a", SHA256: "x"}},
		Changes:  []CallChanges{{Result: res, Changes: []protocol.FileChange{{Path: "a", After: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "9"}}}}},
		Rewind:   &protocol.Rewind{ToSeq: 1, FromSeq: 2},
		Source:   &SessionSource{Source: "claude", SourceID: "abc"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGrant(ctx, "session:s1", "run_command(ls)"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "ap", SessionID: "s1", Call: protocol.ToolCall{ID: "c", Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO quarantine (tbl, session_id, key, content, error, quarantined_at)
VALUES ('messages', 's1', '9', 'x', 'bad', 0)`); err != nil {
		t.Fatal(err)
	}
	if id, err := s.ImportedSession(ctx, "claude", "abc"); err != nil || id != "s1" {
		t.Fatalf("imported = %q, %v", id, err)
	}
	// In use: a live owner holds its lease.
	if _, err := s.AcquireLease(ctx, "s1", NewOwner(), time.Minute); err != nil {
		t.Fatal(err)
	}
	var held *LeaseHeldError
	if err := s.DeleteSession(ctx, "s1"); !errors.As(err, &held) {
		t.Fatalf("delete of a session in use: %v", err)
	}
	clock.Add(2 * time.Minute) // the lease expired
	if err := s.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("session still there: %v", err)
	}
	for table, where := range map[string]string{
		"messages": "session_id = 's1'", "events": "session_id = 's1'", "approvals": "session_id = 's1'",
		"file_versions": "session_id = 's1'", "file_changes": "session_id = 's1'", "rewinds": "session_id = 's1'",
		"messages_fts": "session_id = 's1'", "session_sources": "session_id = 's1'", "leases": "session_id = 's1'",
		"permission_grants": "scope = 'session:s1'", "quarantine": "session_id = 's1'",
	} {
		var n int
		if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+where).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows left, %v", table, n, err)
		}
	}
	if hits, _ := s.Search(ctx, SearchQuery{Text: "doomed"}); len(hits) != 0 {
		t.Errorf("search still finds %v", hits)
	}
	if _, err := s.GetSession(ctx, "keep"); err != nil {
		t.Error(err)
	}
	if err := s.DeleteSession(ctx, "s1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func TestSearchIndexBackfilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	if _, err := s.AppendMessage(ctx, "s1", &protocol.Message{Role: protocol.RoleUser, Content: "ancient ocelot"}); err != nil {
		t.Fatal(err)
	}
	// Undo the index as a database from before migration 9 would be, and
	// run the migration's backfill again.
	all, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	var backfill string
	for _, m := range all {
		if strings.HasSuffix(m.name, "_message_search.sql") {
			backfill = m.sql[strings.Index(m.sql, "INSERT INTO messages_fts (rowid, body, session_id, seq, role)\nSELECT"):]
		}
	}
	if backfill == "" {
		t.Fatal("no backfill in the message search migration")
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM messages_fts`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, backfill); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.Search(ctx, SearchQuery{Text: "ocelot"}); err != nil || len(hits) != 1 {
		t.Errorf("hits = %v, %v", hits, err)
	}
}

func TestSearchCommonWordGivesNewest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	var msgs []*protocol.Message
	for i := range searchCandidates + 10 {
		text := "common filler"
		if i%2 == 0 {
			text = "common common common " + strconv.Itoa(i)
		}
		msgs = append(msgs, &protocol.Message{Role: protocol.RoleUser, Content: text})
	}
	if err := s.AppendBatch(ctx, "s1", Batch{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, SearchQuery{Text: "common", Limit: 5})
	if err != nil || len(hits) != 5 {
		t.Fatalf("hits = %v, %v", hits, err)
	}
	for i, h := range hits {
		// Too many to rank: the newest, newest first.
		if want := int64(searchCandidates + 10 - i); h.Seq != want || h.Rank != 0 {
			t.Errorf("hit %d = seq %d rank %v, want seq %d rank 0", i, h.Seq, h.Rank, want)
		}
	}
	// A rarer word is ranked.
	hits, _ = s.Search(ctx, SearchQuery{Text: "filler", Limit: 3})
	if len(hits) != 3 || hits[0].Rank >= 0 {
		t.Errorf("ranked hits = %+v", hits)
	}
}
