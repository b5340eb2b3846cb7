package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// The search benchmarks' corpus: 10,000 sessions of 50 messages, 500,000
// messages in all, the same for both stores.
const (
	CorpusSessions = 10_000
	CorpusMessages = 50
)

// CorpusSession is a session of the search corpus: its number (0, 1, …),
// id, title and workspace (one of 20), and its messages' roles and
// contents as the stores keep them (JSON), for Seq 1, 2, ….
type CorpusSession struct {
	N                    int
	ID, Title, Workspace string
	Roles                []string
	Contents             []string
}

// SearchCorpus calls add with each session of the search corpus in turn,
// and stops at add's first error. Words are drawn from a Zipf
// distribution over 20,000 words, as words are in text: "w1" is in most
// messages, "w2000" in about one in 200. The corpus is the same at every
// call.
func SearchCorpus(add func(CorpusSession) error) error {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 1, 19_999)
	roles := []protocol.Role{protocol.RoleUser, protocol.RoleAssistant, protocol.RoleTool}
	var words []string
	for i := range CorpusSessions {
		id := fmt.Sprintf("s%05d", i)
		cs := CorpusSession{N: i, ID: id, Title: "session " + id, Workspace: fmt.Sprintf("/work/project%d", i%20)}
		for seq := 1; seq <= CorpusMessages; seq++ {
			words = words[:0]
			for range 20 + rng.IntN(40) {
				words = append(words, "w"+strconv.FormatUint(zipf.Uint64()+1, 10))
			}
			m := protocol.Message{Role: roles[seq%3], Content: strings.Join(words, " ")}
			if m.Role == protocol.RoleTool {
				m.ToolCallID = "c"
			}
			content, err := json.Marshal(m)
			if err != nil {
				return err
			}
			cs.Roles, cs.Contents = append(cs.Roles, string(m.Role)), append(cs.Contents, string(content))
		}
		if err := add(cs); err != nil {
			return err
		}
	}
	return nil
}

// SearchBenchQueries returns the queries the search benchmarks answer over
// the corpus: rare and common words, two words, a phrase, a prefix, one
// workspace.
func SearchBenchQueries() []store.SearchQuery {
	return []store.SearchQuery{
		{Text: "w5000"},   // in about 1 message of 600
		{Text: "w300"},    // about 1 in 40
		{Text: "w20 w30"}, // two common words, both
		{Text: `"w2 w3"`}, // a phrase
		{Text: "w123*"},   // a prefix
		{Text: "w300", Workspace: "/work/project7"},
		{Text: "w2"}, // in most messages
		{Text: "w2", Workspace: "/work/project7"},
		{Text: "w19000"}, // in a handful
	}
}

// SearchBenchName names a query's sub-benchmark.
func SearchBenchName(q store.SearchQuery) string {
	name := strings.ReplaceAll(q.Text, " ", "+")
	if q.Workspace != "" {
		name += "/workspace"
	}
	return name
}

// BenchSearch runs a sub-benchmark of s.Search for each of
// SearchBenchQueries, on a store filled with the search corpus; each
// reports milliseconds per query and its number of hits.
func BenchSearch(b *testing.B, s store.Store) {
	ctx := context.Background()
	for _, q := range SearchBenchQueries() {
		b.Run(SearchBenchName(q), func(b *testing.B) {
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
