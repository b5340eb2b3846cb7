package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The cost of streaming an answer (issue 6): every message.delta goes
// through Update and is followed by one View, which is what the program
// does per frame. Everything finished has been printed to the scrollback
// and forgotten, so the cost must not depend on how long the session is.

// answerTokens is a 2,000-token answer cut into 4-byte tokens.
var answerTokens = func() []string {
	paras := []string{
		"I looked at how the **store** opens the database and found that `Open` retries the migration on every call, which is why the first request of each session is slow.",
		"- `internal/store/store.go`: `Open` runs `migrate` unconditionally\n- `internal/store/migrate.go`: each step takes a table lock\n- `internal/app/app.go`: opens the store once per request",
		"```go\nfunc Open(path string) (*Store, error) {\n\tdb, err := sql.Open(\"sqlite\", path)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn &Store{db: db}, migrateOnce(db)\n}\n```",
		"The fix keeps a version row and skips the steps already applied; the tests in `store_test.go` cover a fresh database, an old one and one that is already current.",
		"1. Added `schema_version`\n2. Made `migrate` idempotent\n3. Ran `go test ./...` — all green",
	}
	var b strings.Builder
	for i := 0; b.Len() < 8000; i++ {
		b.WriteString(paras[i%len(paras)])
		b.WriteString("\n\n")
	}
	s := b.String()[:8000]
	toks := make([]string, 0, 2000)
	for i := 0; i < len(s); i += 4 {
		toks = append(toks, s[i:i+4])
	}
	return toks
}()

// historyExchange returns the events of the i-th exchange of a session:
// four messages — the user's question, an assistant message calling a
// tool, the tool's result (about 1 KB) and the answer (about 500 bytes).
func historyExchange(i int) (question string, events []protocol.Event) {
	question = fmt.Sprintf("Question %d: why does the build of package p%d fail on CI but not locally?", i, i)
	var res strings.Builder
	for j := 0; res.Len() < 1000; j++ {
		fmt.Fprintf(&res, "internal/p%d/file%02d.go:%d:%d: undefined: helper%d (exchange %d)\n", i, j, 10+j, 4+j%7, j, i)
	}
	answer := fmt.Sprintf("The build of `p%d` fails because **helper** was renamed in the last commit and CI builds with the `-mod=readonly` flag.\n\n"+
		"- `internal/p%d/file00.go` still calls the old name\n- the module cache on your machine hid it\n\n"+
		"```go\nfunc run() error { return helper%d() }\n```\n\n"+
		"I renamed the calls and ran `go build ./...`; it passes now. Run the tests again to be sure, and check the other packages that import it.", i, i, i)
	for len(answer) < 500 {
		answer += " More detail follows."
	}
	id := fmt.Sprintf("call%d", i)
	ok := true
	events = []protocol.Event{
		{Type: protocol.EventTurnStarted, Model: "fake/fake-model"},
		{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant,
			Content: "Let me look at the build output.", Reasoning: "The user asks about a CI failure; run the build."}},
		{Type: protocol.EventToolStarted, ToolCallID: id, ToolName: "run_command", Summary: "Run go build ./..."},
		{Type: protocol.EventToolOutput, ToolCallID: id, Text: res.String()[:200]},
		{Type: protocol.EventToolCompleted, ToolCallID: id, ToolName: "run_command", Summary: "Run go build ./...", OK: &ok,
			DurationMS: 1200, Message: &protocol.Message{Role: protocol.RoleTool, ToolName: "run_command", Content: res.String()}},
		{Type: protocol.EventMessageDelta, Text: answer[:40]},
		{Type: protocol.EventMessageCompleted, Text: answer, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: answer}},
		{Type: protocol.EventUsage, Usage: usage(int64(2000+10*i), 300), ContextPercent: 12},
		{Type: protocol.EventTurnCompleted},
	}
	return question, events
}

// streamModel returns a Model at 100×30, in colour, whose session has
// messages messages (rounded down to whole exchanges) played through
// Update and printed, and which is streaming the answer of a new turn.
// What it prints is counted in *printed and dropped, as the terminal
// takes it.
func streamModel(tb testing.TB, messages int, printed *int) *Model {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := New(ctx, Options{Backend: &fakeBackend{}, Session: protocol.Session{ID: "5e55101d00000001", Model: "fake/fake-model"},
		Width: 100, Height: 30})
	tb.Cleanup(func() { cancel(); m.Wait(time.Second) })
	m.onPrint = func(s string) { *printed += len(s) }
	send := func(msg tea.Msg) { m.Update(msg) }
	ask := func(q string) {
		m.input.SetValue(q)
		send(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	for i := 0; i < messages/4; i++ {
		q, evs := historyExchange(i)
		ask(q)
		for _, e := range evs {
			send(eventMsg{e})
			m.View()
		}
		send(turnDoneMsg{})
	}
	ask("Now fix the migration so it runs once.")
	send(eventMsg{protocol.Event{Type: protocol.EventTurnStarted, Model: "fake/fake-model"}})
	if !m.busy {
		tb.Fatal("the model is not streaming a turn")
	}
	return m
}

// streamer feeds the answer's tokens to a Model one by one, starting the
// answer over (after completing it) when all 2,000 have been sent.
type streamer struct {
	m    *Model
	next int
}

// delta sends one token and renders the live area, as a frame does.
func (s *streamer) delta() {
	s.m.Update(eventMsg{protocol.Event{Type: protocol.EventMessageDelta, Text: answerTokens[s.next]}})
	s.m.View()
	s.next++
}

// restart completes the answer streamed so far and starts the next one.
func (s *streamer) restart() {
	s.m.Update(eventMsg{protocol.Event{Type: protocol.EventMessageCompleted,
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: strings.Join(answerTokens[:s.next], "")}}})
	s.next = 0
}

func BenchmarkStreamDelta(b *testing.B) {
	for _, n := range []int{0, 100, 1000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			var printed int
			s := &streamer{m: streamModel(b, n, &printed)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s.next == len(answerTokens) {
					b.StopTimer()
					s.restart()
					b.StartTimer()
				}
				s.delta()
			}
		})
	}
}

// TestStreamDeltaCostFlat checks that a delta costs about as much with a
// 1,000-message history as with none: it times the first 500 deltas of an
// answer on each, a few rounds in turn, and compares the best means. Only the ratio is checked;
// absolute times depend on the machine.
func TestStreamDeltaCostFlat(t *testing.T) {
	const deltas, rounds = 500, 4
	var printed int
	small := &streamer{m: streamModel(t, 0, &printed)}
	large := &streamer{m: streamModel(t, 1000, &printed)}
	mean := func(s *streamer) time.Duration {
		s.restart()
		start := time.Now()
		for range deltas {
			s.delta()
		}
		return time.Since(start) / deltas
	}
	// Warm up both, then measure them in turn on the same tokens.
	mean(small)
	mean(large)
	best0, best1 := time.Duration(1<<62), time.Duration(1<<62)
	for range rounds {
		best0 = min(best0, mean(small))
		best1 = min(best1, mean(large))
	}
	ratio := float64(best1) / float64(max(best0, 1))
	t.Logf("mean per delta: history 0 %v, history 1000 %v (ratio %.2f)", best0, best1, ratio)
	if ratio > 5 {
		t.Errorf("a delta with a 1,000-message history costs %.1f× one with none (%v vs %v); want at most 5×", ratio, best1, best0)
	}
}
