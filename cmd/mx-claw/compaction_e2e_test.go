// End-to-end tests of compaction on a small context window: the ledger, the
// pairing of calls, /compact and the fallback when a summary fails.

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// newSmallWindowEnv is an env whose model has a small context window, so
// that a session of a few dozen steps must compact, and whose workspace
// holds big.txt, a 400-line file to read piece by piece.
func newSmallWindowEnv(t *testing.T, window int) *env {
	t.Helper()
	e := newEnv(t)
	e.writeHome("config.json", fmt.Sprintf(`{"version":1,"activeProvider":"fake","maxIterations":100,
		"modelSettings":{"fake/fake-model":{"contextWindow":%d,"maxOutputTokens":1000}},
		"providers":{"fake":{"kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"requiresApiKey":false}}}`, window, e.srv.URL()))
	var lines []string
	for i := 0; i < 400; i++ {
		lines = append(lines, fmt.Sprintf("line %03d of a long file that the model reads piece by piece", i))
	}
	e.writeWS("big.txt", strings.Join(lines, "\n")+"\n")
	return e
}

// readBigFile answers requests without tools (summaries) with summary, and
// the others with a read of the next piece of big.txt, steps times, then
// with done.
func readBigFile(steps int, done string, summary func(req *llmtest.Request) llmtest.Reply) llmtest.Responder {
	var mu sync.Mutex
	main := 0
	return func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return summary(req)
		}
		mu.Lock()
		main++
		n := main
		mu.Unlock()
		if n > steps {
			return llmtest.Text(done)
		}
		return llmtest.Call("read_file", fmt.Sprintf(`{"path":"big.txt","offset":%d,"limit":25}`, (n*5)%370+1))
	}
}

// checkPairs fails if a request's messages split an assistant's tool calls
// from their results.
func checkPairs(t *testing.T, i int, msgs []llmtest.ChatMessage) {
	t.Helper()
	for j := 0; j < len(msgs); j++ {
		if len(msgs[j].ToolCalls) == 0 {
			if msgs[j].Role == "tool" {
				t.Errorf("request %d: tool result %s at %d follows no tool call", i, msgs[j].ToolCallID, j)
			}
			continue
		}
		for k, c := range msgs[j].ToolCalls {
			n := j + 1 + k
			if n >= len(msgs) || msgs[n].Role != "tool" || msgs[n].ToolCallID != c.ID {
				t.Errorf("request %d: call %s at %d is not followed by its result", i, c.ID, j)
			}
		}
		j += len(msgs[j].ToolCalls)
	}
}

func TestCompactionKeepsLedgerAndPairs(t *testing.T) {
	t.Parallel()
	const window, steps = 16000, 60
	e := newSmallWindowEnv(t, window)
	e.srv.SetResponder(readBigFile(steps, "done reading", func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Text(fmt.Sprintf("SUMMARY: the user wants big.txt read; %d messages summarised.", len(req.Chat.Messages)))
	}))
	r := e.run("", "run", "--json", "Read big.txt piece by piece. Never touch vendor/.")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	compactions := 0
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventCompaction {
			compactions++
		}
	}
	reqs := e.srv.ChatRequests()
	summaries := 0
	var lastMain llmtest.Request
	for i, req := range reqs {
		if len(req.Chat.Tools) == 0 {
			summaries++
			continue
		}
		lastMain = req
		if req.Size > window*4 {
			t.Errorf("request %d is %d bytes, more than a %d-token window holds", i, req.Size, window)
		}
		checkPairs(t, i, req.Chat.Messages)
		var all strings.Builder
		for _, m := range req.Chat.Messages {
			all.WriteString(m.Content)
		}
		if !strings.Contains(all.String(), "Never touch vendor/.") {
			t.Errorf("request %d lost the user's constraint", i)
		}
	}
	if compactions < 2 || summaries < 2 {
		t.Fatalf("%d compaction events, %d summary requests; want at least 2 of each", compactions, summaries)
	}
	if !strings.Contains(lastMain.Chat.Messages[1].Content, "SUMMARY:") && !strings.Contains(lastMain.Chat.Messages[2].Content, "SUMMARY:") {
		t.Errorf("the last request carries no summary: %+v", lastMain.Chat.Messages[:3])
	}
	// A new process continuing the session projects the same view.
	before := len(reqs)
	r2 := e.run("", "run", "--json", "--continue", "anything else?")
	if r2.code != 0 {
		t.Fatalf("continue: exit %d: %s", r2.code, r2.stderr)
	}
	compactedAgain := false
	for _, ev := range r2.events(t) {
		compactedAgain = compactedAgain || ev.Type == protocol.EventCompaction
	}
	next := e.srv.ChatRequests()[before]
	if !compactedAgain {
		prev := lastMain.Chat.Messages
		for i := range prev {
			if next.Chat.Messages[i].Content != prev[i].Content || next.Chat.Messages[i].Role != prev[i].Role {
				t.Fatalf("after a restart message %d differs:\n%q\nwant\n%q", i, next.Chat.Messages[i].Content, prev[i].Content)
			}
		}
	}
}

func TestManualCompact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY focusing on the API")
		}
		return llmtest.Text("answer")
	})
	r := e.run("", "run", "--json", "first question")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	c := e.run("", "sessions", "compact", id, "--instructions", "focus on the API")
	if c.code != 0 || !strings.Contains(c.stdout, "SUMMARY focusing on the API") {
		t.Fatalf("compact: exit %d %q %q", c.code, c.stdout, c.stderr)
	}
	reqs := e.srv.ChatRequests()
	var summaryReq string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		summaryReq += m.Content
	}
	if !strings.Contains(summaryReq, "focus on the API") {
		t.Errorf("the summary request lacks the instructions")
	}
	r2 := e.run("", "run", "--continue", "second question")
	if r2.code != 0 {
		t.Fatalf("exit %d: %s", r2.code, r2.stderr)
	}
	reqs = e.srv.ChatRequests()
	var view string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		view += m.Role + ":" + m.Content + "\n"
	}
	if !strings.Contains(view, "SUMMARY focusing on the API") || !strings.Contains(view, "first question") {
		t.Errorf("the next view lacks the summary or the ledger's copy of the user's words:\n%s", view)
	}
	// The stored transcript keeps everything.
	d := e.show(id)
	if len(d.Messages) < 5 {
		t.Errorf("%d stored messages after compaction", len(d.Messages))
	}
}

func TestCompactionFailureFallsBackAndPreCompactHookRuns(t *testing.T) {
	t.Parallel()
	const window = 16000
	e := newSmallWindowEnv(t, window)
	marker := filepath.Join(e.home, "precompact-ran")
	e.writeHome("settings.json", fmt.Sprintf(`{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"cat > %s"}]}]}}`, marker))
	e.srv.SetResponder(readBigFile(40, "done", func(*llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 400, Body: `{"error":{"message":"summaries are broken today"}}`}
	}))
	r := e.run("", "run", "--json", "Read big.txt. Keep going.")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	warned := 0
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventWarning && strings.Contains(ev.Text, "compaction failed") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings that compaction failed, want 1 (no new attempt on every step)", warned)
	}
	for i, req := range e.srv.ChatRequests() {
		if len(req.Chat.Tools) == 0 {
			continue
		}
		if req.Size > window*4 {
			t.Errorf("request %d is %d bytes: the fallback did not keep the view within the window", i, req.Size)
		}
		checkPairs(t, i, req.Chat.Messages)
	}
	data, err := os.ReadFile(marker)
	if err != nil || !strings.Contains(string(data), `"hook_event_name":"PreCompact"`) || !strings.Contains(string(data), `"trigger":"auto"`) {
		t.Errorf("PreCompact hook input: %q, %v", data, err)
	}
}
