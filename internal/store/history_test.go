package store

import (
	"context"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

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
		`解析器`:               `"解析 析器"`,
		`解析器*`:              `"解析 析器"`,
		`器*`:                `"器"`,
		`「解析器」。`:            `"解析 析器"`,
		`修复parser bug*`:     `"修 复 parser" "修复" "bug"*`,
		`"解析 器"`:            `"解 析 器" "解析"`,
		`ＡＰＩ　キー`:            `"API" "キー"`,
	} {
		if got := MatchExpression(in); got != want {
			t.Errorf("MatchExpression(%q) = %q, want %q", in, got, want)
		}
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

// TestDeleteSessionDropsIndexRows: the search index rows of a deleted
// session go with it (the conformance suite's DeleteSession shows the rest).
func TestDeleteSessionDropsIndexRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	newSession(t, s, "keep")
	for _, id := range []string{"s1", "keep"} {
		if _, err := s.AppendMessage(ctx, id, &protocol.Message{Role: protocol.RoleUser, Content: "indexed words"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"s1": "0", "keep": "1"} {
		if n, err := s.QueryStringRaw(ctx, "SELECT count(*) FROM messages_fts WHERE session_id = '"+id+"'"); err != nil || n != want {
			t.Errorf("index rows of %s: %s, %v; want %s", id, n, err, want)
		}
	}
}
