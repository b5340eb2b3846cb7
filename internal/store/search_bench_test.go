package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/storetest"
)

// fillSearchStore writes the search corpus (storetest.SearchCorpus)
// straight into the tables of a new store at path (the triggers index
// every message, as in use).
func fillSearchStore(b *testing.B, path string) *store.SQLite {
	b.Helper()
	s := openSQLite(b, path, storetest.Options{})
	ctx := context.Background()
	start := time.Now()
	// One transaction per 1,000 sessions, with its prepared statements.
	var tx *sql.Tx
	var insSess, insMsg *sql.Stmt
	begin := func() (err error) {
		if tx, err = s.Writer().BeginTx(ctx, nil); err != nil {
			return err
		}
		if insSess, err = tx.PrepareContext(ctx, `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`); err != nil {
			return err
		}
		insMsg, err = tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
		return err
	}
	err := begin()
	if err == nil {
		err = storetest.SearchCorpus(func(cs storetest.CorpusSession) error {
			if _, err := insSess.ExecContext(ctx, cs.ID, cs.Title, cs.Workspace, cs.N, cs.N); err != nil {
				return err
			}
			for i, content := range cs.Contents {
				if _, err := insMsg.ExecContext(ctx, cs.ID, i+1, cs.Roles[i], content, i+1); err != nil {
					return err
				}
			}
			if cs.N%1000 != 999 {
				return nil
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			return begin()
		})
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("stored and indexed %d messages in %v", storetest.CorpusSessions*storetest.CorpusMessages, time.Since(start).Round(time.Second))
	return s
}

// BenchmarkSearch answers storetest.SearchBenchQueries over the search
// corpus of 10,000 sessions of 50 messages (the PostgreSQL store's
// BenchmarkSearch answers the same).
//
// Filling the store takes minutes; with MX_CLAW_BENCH_SEARCH_DB set to a
// file name, the filled store is kept there and used by later runs.
func BenchmarkSearch(b *testing.B) {
	var s *store.SQLite
	if keep := os.Getenv("MX_CLAW_BENCH_SEARCH_DB"); keep != "" {
		if _, err := os.Stat(keep); err != nil {
			filled := fillSearchStore(b, filepath.Join(b.TempDir(), "search.db"))
			if err := filled.Close(); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(filled.Path(), keep); err != nil {
				b.Fatal(err)
			}
		}
		s = openSQLite(b, keep, storetest.Options{})
	} else {
		s = fillSearchStore(b, filepath.Join(b.TempDir(), "search.db"))
	}
	storetest.BenchSearch(b, s)
}
