package storetest

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testSearch: search finds the messages of every session (or of one
// workspace) by their words, tool calls' names and arguments included and
// system prompts left out, with phrases, prefixes and stems, reading
// nothing in the query as syntax; each hit has its session's title and a
// snippet marking the words found.
func testSearch(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	for _, id := range []string{"s1", "s2"} {
		NewSession(t, s, id)
	}
	other := &protocol.Session{ID: "s3", Workspace: "/elsewhere"}
	if err := s.CreateSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	add := func(id string, msgs ...*protocol.Message) {
		t.Helper()
		if err := s.AppendBatch(ctx, id, store.Batch{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	add("s1",
		&protocol.Message{Role: protocol.RoleSystem, Content: "You are a coding agent; zebra."},
		&protocol.Message{Role: protocol.RoleUser, Content: "Please fix the flaky parser tests"},
		&protocol.Message{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "c", Name: "run_command", Arguments: `{"command":"go test ./parser"}`}}},
		&protocol.Message{Role: protocol.RoleTool, ToolCallID: "c", Content: "--- FAIL: TestParse (0.01s): quokka not found"})
	add("s2",
		&protocol.Message{Role: protocol.RoleUser, Content: "write a parser for TOML"},
		&protocol.Message{Role: protocol.RoleUser, Content: "soon not JSON"})
	add("s3", &protocol.Message{Role: protocol.RoleUser, Content: "parser again, elsewhere"})
	// A row that is not JSON (an old or damaged one) is indexed as text.
	b.Exec(t, s, `UPDATE messages SET content = 'raw walrus text' WHERE session_id = 's2' AND seq = 2`)

	cases := []struct {
		query, workspace string
		want             []string // session:seq in rank order, or only the set when unordered
	}{
		{query: "quokka", want: []string{"s1:4"}},      // a word of a tool result
		{query: "flaky", want: []string{"s1:2"}},       // a word of a user message
		{query: "FLAKY", want: []string{"s1:2"}},       // in any case
		{query: "test"},                                // "tests" and "test" stem alike: hits in any order
		{query: "run_command", want: []string{"s1:3"}}, // a tool call's name and arguments
		{query: "parser", workspace: "/w"},             // "./parser" holds the word parser: s1:2, s1:3, s2:1
		{query: "zebra"},                               // system prompts are not indexed
		{query: "walrus", want: []string{"s2:2"}},      // not JSON
		{query: "parser", workspace: "/elsewhere", want: []string{"s3:1"}},
		{query: `"parser for"`, want: []string{"s2:1"}}, // a phrase
		{query: `"for parser"`, want: []string{}},       // its words in another order
		{query: "fix tests", want: []string{"s1:2"}},    // all words, anywhere
		{query: "quok*", want: []string{"s1:4"}},        // a prefix
		{query: `fix AND OR NEAR( "`, want: []string{}}, // syntax words are plain words
		{query: `fix & !(x | y) :*`, want: []string{}},  // so are PostgreSQL's
	}
	for _, c := range cases {
		hits, err := s.Search(ctx, store.SearchQuery{Text: c.query, Workspace: c.workspace})
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		got := []string{}
		for _, h := range hits {
			got = append(got, h.SessionID+":"+strconv.FormatInt(h.Seq, 10))
			if h.Snippet == "" || h.Title == "" && h.SessionID != "s3" || h.UpdatedAt.IsZero() {
				t.Errorf("%q: hit %+v", c.query, h)
			}
		}
		switch c.query {
		case "test":
			// Order depends on the ranking; the set is what matters.
			if strings.Join(sorted(got), ",") != "s1:2,s1:3" {
				t.Errorf("%q: hits %v, want s1:2 and s1:3", c.query, got)
			}
			continue
		case "parser":
			if c.workspace == "/w" {
				if strings.Join(sorted(got), ",") != "s1:2,s1:3,s2:1" {
					t.Errorf("%q in %q: hits %v, want s1:2, s1:3 and s2:1", c.query, c.workspace, got)
				}
				continue
			}
		case "zebra":
			if len(got) != 0 {
				t.Errorf("%q: hits %v, want none", c.query, got)
			}
			continue
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%q in %q: hits %v, want %v", c.query, c.workspace, got, c.want)
		}
	}
	hits, _ := s.Search(ctx, store.SearchQuery{Text: "quokka"})
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "**quokka**") || hits[0].Role != protocol.RoleTool ||
		hits[0].Title != "t s1" || hits[0].Workspace != "/w" {
		t.Errorf("hit = %+v", hits)
	}
	if hits, _ := s.Search(ctx, store.SearchQuery{Text: "flaky"}); len(hits) != 1 ||
		hits[0].Snippet != "Please fix the **flaky** parser tests" {
		t.Errorf("snippet of a short message = %+v", hits)
	}
	if _, err := s.Search(ctx, store.SearchQuery{Text: `  " "  `}); !errors.Is(err, store.ErrEmptyQuery) {
		t.Errorf("empty query: %v", err)
	}
}

// testSearchSnippets: a snippet is about 16 words of one line around the
// first match, cut with … where the text goes on.
func testSearchSnippets(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	long := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\n" +
		"seventeen eighteen nineteen twenty twentyone twentytwo twentythree twentyfour ocelot twentysix\n\t" +
		"twentyseven twentyeight twentynine thirty thirtyone thirtytwo thirtythree thirtyfour thirtyfive\n" +
		"thirtysix thirtyseven thirtyeight thirtynine forty"
	if _, err := s.AppendMessage(ctx, "s1", &protocol.Message{Role: protocol.RoleUser, Content: long}); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, store.SearchQuery{Text: "ocelot"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	snip := hits[0].Snippet
	words := strings.Fields(strings.Trim(snip, "…"))
	if !strings.HasPrefix(snip, "…") || !strings.HasSuffix(snip, "…") || !strings.Contains(snip, " **ocelot** ") ||
		strings.ContainsAny(snip, "\n\t") || len(words) < 8 || len(words) > 20 {
		t.Errorf("snippet = %q", snip)
	}
}

// testSearchCommonWordGivesNewest: a query matching more messages than
// store.SearchCandidates gets the newest matches, newest first, unranked
// (rank 0); a rarer one is ranked (rank below 0, lower is better).
func testSearchCommonWordGivesNewest(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	var msgs []*protocol.Message
	for i := range store.SearchCandidates + 10 {
		text := "common filler"
		if i%2 == 0 {
			text = "common common common " + strconv.Itoa(i)
		}
		msgs = append(msgs, &protocol.Message{Role: protocol.RoleUser, Content: text})
	}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, store.SearchQuery{Text: "common", Limit: 5})
	if err != nil || len(hits) != 5 {
		t.Fatalf("hits = %v, %v", hits, err)
	}
	for i, h := range hits {
		// Too many to rank: the newest, newest first.
		if want := int64(store.SearchCandidates + 10 - i); h.Seq != want || h.Rank != 0 {
			t.Errorf("hit %d = seq %d rank %v, want seq %d rank 0", i, h.Seq, h.Rank, want)
		}
	}
	// A rarer word is ranked.
	hits, _ = s.Search(ctx, store.SearchQuery{Text: "filler", Limit: 3})
	if len(hits) != 3 || hits[0].Rank >= 0 || hits[0].Rank > hits[1].Rank || hits[1].Rank > hits[2].Rank {
		t.Errorf("ranked hits = %+v", hits)
	}
	// Two words: only the message with both.
	hits, _ = s.Search(ctx, store.SearchQuery{Text: "common 1000"})
	if len(hits) != 1 || hits[0].Seq != 1001 || hits[0].Rank >= 0 {
		t.Errorf("hits of two words = %+v", hits)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
