package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// overflowBody is an OpenAI-style refusal of a request over a window of n
// tokens.
func overflowBody(n, got int) string {
	return fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, n, got)
}

// TestContextOverflowCompactsAndRetries: a session goes on with a model
// whose real window is smaller than mx-claw thought; the provider refuses
// the request as too long, and the turn compacts the conversation to the
// window the provider named and asks once more, and goes on.
func TestContextOverflowCompactsAndRetries(t *testing.T) {
	t.Parallel()
	const window, limit = 8000, 30000 // tokens the provider says; bytes it takes
	e := newEnv(t)
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %03d of a long file that fills the model's small window", i))
	}
	e.writeWS("big.txt", strings.Join(lines, "\n")+"\n")
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		reads := len(toolResults(*req))
		switch {
		case len(req.Chat.Tools) == 0:
			return llmtest.Text("SUMMARY: the user had big.txt read; it holds 400 numbered lines.")
		case req.Chat.Model == "other-model" && req.Size > limit:
			return llmtest.Reply{Status: 400, Body: overflowBody(window, req.Size/3)}
		case req.Chat.Model == "other-model":
			return llmtest.Text("it fits now")
		case reads < 5:
			return llmtest.Call("read_file", fmt.Sprintf(`{"path":"big.txt","offset":%d,"limit":60}`, reads*60+1))
		}
		return llmtest.Text("read it")
	})
	if r := e.run("", "run", "read big.txt"); r.code != 0 {
		t.Fatalf("first turn: exit %d: %s", r.code, r.stderr)
	}
	r := e.run("", "run", "--continue", "--json", "--model", "fake/other-model", "and now?")
	if r.code != 0 || !strings.Contains(r.stdout, "it fits now") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	warned, compacted := false, false
	for _, ev := range r.events(t) {
		warned = warned || ev.Type == protocol.EventWarning && strings.Contains(ev.Text, "over the model's context window")
		compacted = compacted || ev.Type == protocol.EventCompaction
	}
	if !warned || !compacted {
		t.Errorf("warning %v, compaction %v; want both", warned, compacted)
	}
	var sizes []int
	refused := 0
	for _, req := range e.srv.ChatRequests() {
		if len(req.Chat.Tools) > 0 && req.Chat.Model == "other-model" {
			sizes = append(sizes, req.Size)
			if req.Size > limit {
				refused++
			}
		}
	}
	t.Logf("requests to the smaller model: %v bytes", sizes)
	if refused != 1 || len(sizes) != 2 || sizes[1] > limit {
		t.Errorf("requests %v; want one refusal, then one that fits", sizes)
	}
}

// TestContextOverflowTwiceIsAClearError: when even the compacted request
// is refused, the turn ends with a clear error after one retry, not in a
// loop.
func TestContextOverflowTwiceIsAClearError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":512}}`}
	})
	r := e.run("", "run", "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "does not fit the model's context window, even after compacting it") ||
		!strings.Contains(r.stderr, "exceeds the available context size") {
		t.Errorf("exit %d, stderr %q; want 1 and a clear error", r.code, r.stderr)
	}
	if n := len(e.srv.ChatRequests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n)
	}
}
