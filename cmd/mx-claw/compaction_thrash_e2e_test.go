package main_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The issue's scenario: a 12,000-token window when the first request (the
// system prompt, the tool schemas and the user's message) was 18.3 KB.
const (
	issueWindow       = 12000
	issueFirstRequest = 18283
)

// TestCompactionDoesNotThrash is the long session on a small window of
// issue 20: 40 steps, each reading a different 6 KB file. Before the fix
// every step after the first compaction crossed the threshold again and
// paid a summary request (38 compactions in 40 steps); now a compaction
// leaves the view well below the threshold, so the next one comes several
// steps later.
//
// The window keeps the issue's proportion to the fixed part of a request:
// every tool added since makes that part bigger (22 KB with 17 tools), and
// on the literal 12,000 tokens it would leave room for fewer reads between
// compactions however well compaction works, so the test would measure
// the tool schemas rather than compaction.
func TestCompactionDoesNotThrash(t *testing.T) {
	t.Parallel()
	const steps = 40
	probe := newSmallWindowEnv(t, issueWindow)
	if r := probe.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("probe: exit %d: %s", r.code, r.stderr)
	}
	first := probe.srv.ChatRequests()[0].Size
	window := issueWindow * first / issueFirstRequest
	t.Logf("first request %d bytes: a window of %d tokens", first, window)
	e := newSmallWindowEnv(t, window)
	for i := range steps {
		var b strings.Builder
		for j := 0; b.Len() < 6000; j++ {
			fmt.Fprintf(&b, "file %02d line %03d: some words of a source file the model reads whole\n", i, j)
		}
		e.writeWS(fmt.Sprintf("src/f%02d.txt", i), b.String())
	}
	var mu sync.Mutex
	main := 0
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY: the user wants every file of src/ read; reading them in order.")
		}
		mu.Lock()
		main++
		n := main
		mu.Unlock()
		if n > steps {
			return llmtest.Text("read them all")
		}
		return llmtest.Call("read_file", fmt.Sprintf(`{"path":"src/f%02d.txt"}`, n-1))
	})
	const pinned = "Read every file of src/. Never touch vendor/."
	r := e.run("", "run", "--json", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	compactions := 0
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventCompaction {
			compactions++
		}
	}
	var summaries, summaryTokens, mains, extended int
	var last llmtest.Request
	compactedSince := false
	for i, req := range e.srv.ChatRequests() {
		if len(req.Chat.Tools) == 0 {
			summaries++
			summaryTokens += req.Size/4 + 20 // the fake's usage: a token per 4 bytes in, the short answer out
			compactedSince = true
			continue
		}
		checkPairs(t, i, req.Chat.Messages)
		// Between compactions each request repeats the previous one and
		// appends to it, so the provider's prompt cache keeps working.
		if mains > 0 && !compactedSince {
			if err := extends(req.Chat.Messages, last.Chat.Messages); err != nil {
				t.Errorf("request %d does not extend the one before: %v", i, err)
			}
			extended++
		}
		mains++
		last, compactedSince = req, false
	}
	t.Logf("%d steps on a %d-token window: %d compactions, %d summary requests, about %d summary tokens",
		mains, window, compactions, summaries, summaryTokens)
	if mains != steps+1 {
		t.Errorf("%d main requests, want %d", mains, steps+1)
	}
	if extended < steps/2 {
		t.Errorf("only %d requests extend the one before", extended)
	}
	if compactions == 0 || compactions > steps/3 {
		t.Errorf("%d compactions in %d steps, want between 1 and %d", compactions, steps, steps/3)
	}
	var view strings.Builder
	for _, m := range last.Chat.Messages {
		view.WriteString(m.Content)
	}
	if !strings.Contains(view.String(), pinned) {
		t.Errorf("the last request lost the user's instruction %q", pinned)
	}
}

// extends reports why msgs does not start with every message of prev, if
// it does not.
func extends(msgs, prev []llmtest.ChatMessage) error {
	if len(msgs) < len(prev) {
		return fmt.Errorf("%d messages, the previous request had %d", len(msgs), len(prev))
	}
	for i := range prev {
		a, b := &msgs[i], &prev[i]
		if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
			return fmt.Errorf("message %d differs", i)
		}
		for k := range a.ToolCalls {
			if a.ToolCalls[k] != b.ToolCalls[k] {
				return fmt.Errorf("message %d: call %d differs", i, k)
			}
		}
	}
	return nil
}
