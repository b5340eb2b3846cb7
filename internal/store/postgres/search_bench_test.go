package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/store/storetest"
)

// BenchmarkSearch answers storetest.SearchBenchQueries over the search
// corpus of 10,000 sessions of 50 messages, as the SQLite store's
// BenchmarkSearch does: the same messages, the same queries. The corpus is
// copied into a new database of the throwaway cluster (COPY; the
// generated column indexes each message as an insert would), which is
// then analysed, as autovacuum would.
//
// With MX_CLAW_BENCH_SEARCH_PG set to a postgres:// URL, that database is
// used instead, filled only if it has no sessions, and kept.
func BenchmarkSearch(b *testing.B) {
	url := os.Getenv("MX_CLAW_BENCH_SEARCH_PG")
	if url == "" {
		url = pg.NewDB(b)
	}
	s := openPG(b, url, noOptions)
	if n := pgBackend().QueryString(b, s, `SELECT count(*) FROM sessions`); n == "0" {
		fillSearchCorpus(b, url)
	}
	storetest.BenchSearch(b, s)
}

// fillSearchCorpus copies the search corpus into the store at url.
func fillSearchCorpus(b *testing.B, url string) {
	ctx := context.Background()
	conn := connect(b, url)
	start := time.Now()
	epoch := time.Unix(0, 0).UTC()
	var sessions, messages [][]any
	flush := func() error {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"sessions"},
			[]string{"id", "title", "workspace", "created_at", "updated_at"}, pgx.CopyFromRows(sessions)); err != nil {
			return err
		}
		_, err := conn.CopyFrom(ctx, pgx.Identifier{"messages"},
			[]string{"session_id", "seq", "role", "content", "created_at"}, pgx.CopyFromRows(messages))
		sessions, messages = sessions[:0], messages[:0]
		return err
	}
	err := storetest.SearchCorpus(func(cs storetest.CorpusSession) error {
		at := epoch.Add(time.Duration(cs.N) * time.Millisecond)
		sessions = append(sessions, []any{cs.ID, cs.Title, cs.Workspace, at, at})
		for i, content := range cs.Contents {
			messages = append(messages, []any{cs.ID, int64(i + 1), cs.Roles[i], content, epoch.Add(time.Duration(i+1) * time.Millisecond)})
		}
		if cs.N%1000 == 999 {
			return flush()
		}
		return nil
	})
	if err == nil && len(sessions) > 0 {
		err = flush()
	}
	if err == nil {
		_, err = conn.Exec(ctx, `VACUUM ANALYZE sessions, messages`)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("stored and indexed %d messages in %v", storetest.CorpusSessions*storetest.CorpusMessages, time.Since(start).Round(time.Second))
}
