package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
)

func TestSearchIndexText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain ASCII, as it is": "plain ASCII, as it is",
		"请修复解析器的错误":             "请 修 复 解 析 器 的 错 误",
		"修复parser的bug":          "修 复 parser 的 bug",
		"修复 parser":             "修 复 parser",
		"「解析器」。":                "「 解 析 器 」。",
		"パーサーのテスト":              "パ ー サ ー の テ ス ト",
		"한국어 검색":                "한 국 어 검 색",
		"ＡＰＩ１２　ｘ":               "API12 x",
		"café 𠀀x":               "café 𠀀 x",
	} {
		if got := SearchIndexText(in); got != want {
			t.Errorf("SearchIndexText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCJKSearchAfterMigration: a database made before migration 12, its
// messages indexed as whole runs of CJK text, finds CJK words once Open
// has migrated it.
func TestSearchIndexBody(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain ASCII, as it is": "plain ASCII, as it is",
		"解析器":                   "解 析 器 \ue010 解析 析器",
		"修复parser的bug":          "修 复 parser 的 bug \ue010 修复",
		"解析，器。错误":               "解 析 , 器 。 错 误 \ue010 解析 \ue010 错误",
		"ＡＰＩキー":                 "API キ ー \ue010 キー",
	} {
		if got := SearchIndexBody(in); got != want {
			t.Errorf("SearchIndexBody(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCJKSearchAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	all, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all[:11] {
		if _, err := db.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	for _, q := range []string{
		`PRAGMA user_version = 11`,
		`INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('old', 'old', '/w', 1, 1)`,
		`INSERT INTO messages (session_id, seq, role, content, created_at) VALUES
			('old', 1, 'user', '{"role":"user","content":"请修复解析器的错误"}', 1),
			('old', 2, 'assistant', '{"role":"assistant","content":"fixed the parser"}', 1)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var before int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '"解 析 器"'`).Scan(&before); err != nil || before != 0 {
		t.Fatalf("before the migration: %d hits, %v; the old index should miss", before, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for q, want := range map[string]int64{"解析器": 1, "错误": 1, "parser": 2} {
		hits, err := s.Search(ctx, SearchQuery{Text: q})
		if err != nil || len(hits) != 1 || hits[0].Seq != want {
			t.Errorf("%q after the migration: %+v, %v; want seq %d", q, hits, err, want)
		}
	}
	// And new messages are indexed the new way.
	if _, err := s.w.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, created_at)
VALUES ('old', 3, 'user', '{"role":"user","content":"新的解析器"}', 2)`); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.Search(ctx, SearchQuery{Text: "解析器"}); err != nil || len(hits) != 2 {
		t.Errorf("解析器 with a new message: %+v, %v", hits, err)
	}
}

// TestCJKBigramsAfterMigration: a database made before migration 13, its
// CJK text indexed one character a word, finds CJK words by their pairs
// of characters once Open has migrated it, and no longer across
// punctuation.
func TestCJKBigramsAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	all, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all[:12] {
		if _, err := db.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	for _, q := range []string{
		`PRAGMA user_version = 12`,
		`INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('old', 'old', '/w', 1, 1)`,
		`INSERT INTO messages (session_id, seq, role, content, created_at) VALUES
			('old', 1, 'user', '{"role":"user","content":"数据库，连接池"}', 1),
			('old', 2, 'assistant', '{"role":"assistant","content":"fixed the \u89e3\u6790\u5668"}', 1),
			('old', 3, 'system', '{"role":"system","content":"解析器"}', 1)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for q, want := range map[string]string{"连接池": "1", "库连": "", "解析器": "2", "fixed": "2", "数据库 池": "1"} {
		hits, err := s.Search(ctx, SearchQuery{Text: q})
		got := ""
		for _, h := range hits {
			got += strconv.FormatInt(h.Seq, 10)
		}
		if err != nil || got != want {
			t.Errorf("%q after the migration: seqs %q, %v; want %q", q, got, err, want)
		}
	}
}
