package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// searchSessions and searchMessages size the search benchmark: 10,000
// sessions of 50 messages, 500,000 messages in all.
const (
	searchSessions = 10_000
	searchMessages = 50
)

// fillSearchStore writes the benchmark's sessions straight into the
// tables (the triggers index every message, as in use). Words are drawn
// from a Zipf distribution over 20,000 words, as words are in text: "w1"
// is in most messages, "w2000" in about one in 200.
func fillSearchStore(b *testing.B) *SQLite {
	b.Helper()
	s := openAt(b, filepath.Join(b.TempDir(), "search.db"))
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 1, 19_999)
	start := time.Now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	insSess, _ := tx.PrepareContext(ctx, `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
	insMsg, _ := tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
	roles := []protocol.Role{protocol.RoleUser, protocol.RoleAssistant, protocol.RoleTool}
	var words []string
	for i := range searchSessions {
		id := fmt.Sprintf("s%05d", i)
		ws := fmt.Sprintf("/work/project%d", i%20)
		if _, err := insSess.ExecContext(ctx, id, "session "+id, ws, int64(i), int64(i)); err != nil {
			b.Fatal(err)
		}
		for seq := 1; seq <= searchMessages; seq++ {
			words = words[:0]
			for range 20 + rng.IntN(40) {
				words = append(words, "w"+strconv.FormatUint(zipf.Uint64()+1, 10))
			}
			m := protocol.Message{Role: roles[seq%3], Content: strings.Join(words, " ")}
			if m.Role == protocol.RoleTool {
				m.ToolCallID = "c"
			}
			content, _ := json.Marshal(m)
			if _, err := insMsg.ExecContext(ctx, id, seq, string(m.Role), string(content), int64(seq)); err != nil {
				b.Fatal(err)
			}
		}
		if i%1000 == 999 {
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			if tx, err = s.w.BeginTx(ctx, nil); err != nil {
				b.Fatal(err)
			}
			insSess, _ = tx.PrepareContext(ctx, `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
			insMsg, _ = tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored and indexed %d messages in %v", searchSessions*searchMessages, time.Since(start).Round(time.Second))
	return s
}

// BenchmarkSearch answers queries over 10,000 sessions of 50 messages:
// rare and common words, two words, a phrase, a prefix, one workspace.
//
// Filling the store takes minutes; with MX_CLAW_BENCH_SEARCH_DB set to a
// file name, the filled store is kept there and used by later runs.
func BenchmarkSearch(b *testing.B) {
	var s *SQLite
	if keep := os.Getenv("MX_CLAW_BENCH_SEARCH_DB"); keep != "" {
		if _, err := os.Stat(keep); err != nil {
			filled := fillSearchStore(b)
			if err := filled.Close(); err != nil {
				b.Fatal(err)
			}
			if err := os.Rename(filled.Path(), keep); err != nil {
				b.Fatal(err)
			}
		}
		s = openAt(b, keep)
	} else {
		s = fillSearchStore(b)
	}
	ctx := context.Background()
	for _, q := range []SearchQuery{
		{Text: "w5000"},   // in about 1 message of 600
		{Text: "w300"},    // about 1 in 40
		{Text: "w20 w30"}, // two common words, both
		{Text: `"w2 w3"`}, // a phrase
		{Text: "w123*"},   // a prefix
		{Text: "w300", Workspace: "/work/project7"},
		{Text: "w2"}, // in most messages
		{Text: "w2", Workspace: "/work/project7"},
		{Text: "w19000"}, // in a handful
	} {
		name := strings.ReplaceAll(q.Text, " ", "+")
		if q.Workspace != "" {
			name += "/workspace"
		}
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				hits, err := s.Search(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				n = len(hits)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/query")
			b.ReportMetric(float64(n), "hits")
		})
	}
}
