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

// cjkChars are the 100 characters of the corpus's Chinese words.
const cjkChars = "的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长"

// CJKWord returns word k (0 to 9,999) of the corpus's Chinese messages:
// two characters, written with no space between it and the next word.
func CJKWord(k int) string {
	r := []rune(cjkChars)
	return string(r[k%100]) + string(r[k/100%100])
}

// SearchCorpus calls add with each session of the search corpus in turn,
// and stops at add's first error. Words are drawn from a Zipf
// distribution over 20,000 words, as words are in text: "w1" is in most
// messages, "w2000" in about one in 200. Every tenth message is Chinese:
// 10 to 40 words (CJKWord, Zipf-distributed over 5,000) in runs of a few
// words between "，" and "。", with one "w" word among them. The corpus
// is the same at every call.
func SearchCorpus(add func(CorpusSession) error) error {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 1, 19_999)
	cjkRNG := rand.New(rand.NewPCG(3, 4))
	cjkZipf := rand.NewZipf(cjkRNG, 1.07, 1, 4_999)
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
			text := strings.Join(words, " ")
			if seq%10 == 0 {
				text = chineseText(cjkRNG, cjkZipf, words[0])
			}
			m := protocol.Message{Role: roles[seq%3], Content: text}
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

// chineseText returns a message of the corpus's Chinese words with the
// word w among them.
func chineseText(rng *rand.Rand, zipf *rand.Zipf, w string) string {
	var b strings.Builder
	n := 10 + rng.IntN(30)
	at := rng.IntN(n)
	for i := range n {
		if i == at {
			b.WriteString(" " + w + " ")
		}
		b.WriteString(CJKWord(int(zipf.Uint64())))
		switch rng.IntN(8) {
		case 0:
			b.WriteString("，")
		case 1:
			b.WriteString("。")
		}
	}
	return b.String()
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
		// Chinese, in the tenth of the messages that are.
		{Text: CJKWord(1)},                      // a common word (two characters)
		{Text: CJKWord(300)},                    // a rarer one
		{Text: CJKWord(4321)},                   // rare
		{Text: string([]rune(CJKWord(42))[:1])}, // one character
		{Text: CJKWord(1) + CJKWord(2)},         // two words in a row
		{Text: "w20 " + CJKWord(300)},           // mixed
		{Text: CJKWord(300), Workspace: "/work/project7"},
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
