package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/postgres"
)

// TestOpenMigratesOnce: workers starting together on an empty schema
// migrate it once; later opens find it current.
func TestOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	url := pg.NewSchema(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	s := openPG(t, url, noOptions)
	if got := pgBackend().QueryString(t, s, `SELECT string_agg(name, ',' ORDER BY version) FROM mx_claw_migrations`); got != "0001_init.sql,0002_subagents.sql,0003_checkpoints.sql,0004_message_search.sql,0005_approval_answers.sql,0006_cjk_search.sql,0007_cjk_bigrams.sql" {
		t.Errorf("migrations applied: %q", got)
	}
}

// TestOpenNewerSchema: a schema migrated by a newer mx-claw is refused and
// left alone.
func TestOpenNewerSchema(t *testing.T) {
	t.Parallel()
	url := pg.NewSchema(t)
	s := openPG(t, url, noOptions)
	known := pgBackend().QueryString(t, s, `SELECT COUNT(*) FROM mx_claw_migrations`)
	pgBackend().Exec(t, s, `INSERT INTO mx_claw_migrations (version, name) VALUES (99, '0099_future.sql')`)
	_, err := postgres.Open(context.Background(), url)
	var tooNew *store.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Version != 99 || tooNew.Supported != 7 {
		t.Fatalf("Open = %v, want *SchemaTooNewError{99, 7}", err)
	}
	if got := pgBackend().QueryString(t, s, `SELECT COUNT(*) - 1 FROM mx_claw_migrations`); got != known {
		t.Errorf("%s+1 migration rows after the refused open, want %s+1", got, known)
	}
}

// TestSecretsStayOut: the password of the URL is in no error and not in
// the store's name.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-Pa55"
	for _, url := range []string{
		"postgres://mx:" + secret + "@/nodb?host=/nonexistent-dir&port=1&connect_timeout=2",
		"postgres:///nodb?host=/nonexistent-dir&port=1&password=" + secret + "&connect_timeout=2",
		"postgres://mx:" + secret + "@host:notaport/db",
	} {
		_, err := postgres.Open(context.Background(), url)
		if err == nil {
			t.Fatalf("Open(%s) succeeded", postgres.Redact(url))
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password: %v", err)
		}
		if r := postgres.Redact(url); strings.Contains(r, secret) || !strings.Contains(r, "xxxxx") && !strings.Contains(r, "does not parse") {
			t.Errorf("Redact = %s", r)
		}
	}
	if _, err := postgres.Open(context.Background(), "host=/tmp password="+secret); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Open of a key=value string = %v", err)
	}
}

// TestFencingByDatabaseClock: without a test clock, expiry is the
// database's: a write under a lease whose TTL passed in real time is
// refused, and one under a renewed lease goes through.
func TestFencingByDatabaseClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openPG(t, pg.NewSchema(t), noOptions)
	if err := s.CreateSession(ctx, &protocol.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	me := store.NewOwner()
	fenced := store.WithLease(ctx, "s", me)
	if _, err := s.AcquireLease(ctx, "s", me, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(fenced, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLease after the TTL = %v, want ErrNotFound", err)
	}
	err := s.AppendEvent(fenced, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"})
	if !errors.Is(err, store.ErrLeaseLost) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("write after the TTL = %v, want ErrLeaseLost (expired)", err)
	}
	if _, err := s.RenewLease(ctx, "s", me, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(fenced, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); err != nil {
		t.Fatalf("write after renewal = %v", err)
	}
	if evs, _ := s.Events(ctx, "s", 0, 0); len(evs) != 2 {
		t.Errorf("%d events, want 2", len(evs))
	}
}

// TestNoticesAfterReconnect: when the LISTEN connection is dropped (the
// server restarts, a proxy cuts it), the listener connects again and says
// that any session may have new events, then goes on as before.
func TestNoticesAfterReconnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.NewSchema(t)
	s := openPG(t, url, noOptions)
	if err := s.CreateSession(ctx, &protocol.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := s.SubscribeEvents(subCtx)
	if err != nil {
		t.Fatal(err)
	}
	schema := s.Schema()
	// End the listening backend of this schema's channel.
	pgBackend().QueryString(t, s, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE query LIKE 'LISTEN %`+schema+`%'`)
	deadline := time.After(15 * time.Second)
	for all := false; !all; {
		select {
		case n := <-ch:
			all = n.SessionID == ""
		case <-deadline:
			t.Fatal("no notice for every session after the connection was dropped")
		}
	}
	if err := s.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case n := <-ch:
			if n.SessionID == "s" && n.Sequence == 1 {
				return
			}
		case <-deadline:
			t.Fatal("no notice after reconnecting")
		}
	}
}

var noOptions = storetestOptions()

// TestSearchIndexesOlderMessages: the messages of a store from before
// session search (migration 4) are indexed by the migration, and the
// newest of them are the ones stored last.
func TestSearchIndexesOlderMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.NewSchema(t)
	if err := postgres.MigrateTo(ctx, url, 3); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'old one', now(), now());
INSERT INTO messages (session_id, seq, role, content, created_at) VALUES
('old', 1, 'user', '{"role":"user","content":"an ancient ocelot"}', now()),
('old', 2, 'assistant', '{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"read_file","arguments":"{\"path\":\"ocelot.go\"}"}]}', now()),
('old', 3, 'system', '{"role":"system","content":"ocelot rules"}', now())`); err != nil {
		t.Fatal(err)
	}
	s := openPG(t, url, noOptions)
	hits, err := s.Search(ctx, store.SearchQuery{Text: "ocelot"})
	if err != nil || len(hits) != 2 || hits[0].Title != "old one" {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	if got := pgBackend().QueryString(t, s, `SELECT string_agg(seq::text, ',' ORDER BY n) FROM messages`); got != "1,2,3" {
		t.Errorf("messages in the order n gives them: %s", got)
	}
}

// TestCJKSearchAfterMigration: a store from before CJK search (migration
// 6), whose index holds whole runs of CJK text as one word, finds CJK
// words once the migration has indexed its messages again; an English
// message keeps its place and words.
func TestCJKSearchAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.NewSchema(t)
	if err := postgres.MigrateTo(ctx, url, 5); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'old one', now(), now());
INSERT INTO messages (session_id, seq, role, content, created_at) VALUES
('old', 1, 'user', '{"role":"user","content":"请修复解析器的错误"}', now()),
('old', 2, 'assistant', '{"role":"assistant","content":"fixed the parser"}', now()),
('old', 3, 'user', '{"role":"user","content":"\u89e3\u6790\u5668 escaped"}', now())`); err != nil {
		t.Fatal(err)
	}
	var before int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM messages WHERE seq = 1 AND search @@ mx_claw_search_term('解析器', false)`).Scan(&before); err != nil || before != 0 {
		t.Fatalf("before the migration: %d hits, %v; the old index should miss", before, err)
	}
	s := openPG(t, url, noOptions)
	for q, want := range map[string]string{"解析器": "1,3", "错误": "1", "parser": "2"} {
		hits, err := s.Search(ctx, store.SearchQuery{Text: q})
		var got []string
		for _, h := range hits {
			got = append(got, strconv.FormatInt(h.Seq, 10))
		}
		slices.Sort(got)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q after the migration: %v, %v; want seqs %s", q, got, err, want)
		}
	}
	if got := pgBackend().QueryString(t, s, `SELECT string_agg(seq::text, ',' ORDER BY n) FROM messages`); got != "1,2,3" {
		t.Errorf("messages in the order n gives them: %s", got)
	}
}

// TestCJKBigramsAfterMigration: a store from before migration 7, its CJK
// text indexed one character a word, finds CJK words by their pairs of
// characters after it (JSON escapes too), and no longer across
// punctuation.
func TestCJKBigramsAfterMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.NewSchema(t)
	if err := postgres.MigrateTo(ctx, url, 6); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, `INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'old one', now(), now());
INSERT INTO messages (session_id, seq, role, content, created_at) VALUES
('old', 1, 'user', '{"role":"user","content":"数据库，连接池"}', now()),
('old', 2, 'assistant', '{"role":"assistant","content":"fixed the \u89e3\u6790\u5668"}', now())`); err != nil {
		t.Fatal(err)
	}
	s := openPG(t, url, noOptions)
	for q, want := range map[string]string{"连接池": "1", "库连": "", "解析器": "2", "fixed": "2", "数据库 池": "1"} {
		hits, err := s.Search(ctx, store.SearchQuery{Text: q})
		var got []string
		for _, h := range hits {
			got = append(got, strconv.FormatInt(h.Seq, 10))
		}
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q after the migration: %v, %v; want seqs %q", q, got, err, want)
		}
	}
}
