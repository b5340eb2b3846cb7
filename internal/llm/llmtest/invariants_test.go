package llmtest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestCheckChat(t *testing.T) {
	t.Parallel()
	call := func(ids ...string) ChatMessage {
		m := ChatMessage{Role: "assistant"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "read_file", Arguments: "{}"})
		}
		return m
	}
	result := func(id string) ChatMessage { return ChatMessage{Role: "tool", ToolCallID: id, Content: "r"} }
	sys, user, text := ChatMessage{Role: "system"}, ChatMessage{Role: "user"}, ChatMessage{Role: "assistant", Content: "ok"}
	tests := []struct {
		name string
		msgs []ChatMessage
		want string // part of the error; "" for none
	}{
		{name: "no calls", msgs: []ChatMessage{sys, user, text}},
		{name: "paired", msgs: []ChatMessage{sys, user, call("a"), result("a"), text}},
		{name: "parallel calls in order", msgs: []ChatMessage{sys, user, call("a", "b"), result("a"), result("b"), user}},
		{name: "a call without a result", msgs: []ChatMessage{sys, user, call("a"), user}, want: "these have none: a"},
		{name: "the last call without a result", msgs: []ChatMessage{user, call("a", "b"), result("a")}, want: "these have none: b"},
		{name: "results out of order", msgs: []ChatMessage{user, call("a", "b"), result("b"), result("a")}, want: `has tool_call_id "b"`},
		{name: "a result for no call", msgs: []ChatMessage{sys, user, result("x")}, want: "must answer a call"},
		{name: "a second result", msgs: []ChatMessage{user, call("a"), result("a"), result("a")}, want: "must answer a call"},
		{name: "a result after a user message", msgs: []ChatMessage{user, call("a"), user, result("a")}, want: "these have none: a"},
		{name: "two calls with one id", msgs: []ChatMessage{user, call("a", "a"), result("a"), result("a")}, want: "two tool calls"},
	}
	for _, tt := range tests {
		err := CheckChat(tt.msgs)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.want)
		}
	}
}

// recordingTB is a testing.TB that keeps what a test would report, so the
// cleanup check can be seen failing on a deliberately broken request.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(f, a...))
}

func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// An unpaired call is answered 400, as a provider answers it, and fails
// the test at its end; a valid request passes.
func TestTestServerFailsOnUnpairedCall(t *testing.T) {
	t.Parallel()
	post := func(s *Server, body string) int {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const good = `{"model":"m","messages":[{"role":"user","content":"hi"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"r"}]}`
	const unpaired = `{"model":"m","messages":[{"role":"user","content":"hi"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"user","content":"again"}]}`

	ok := &recordingTB{TB: t}
	s := NewTestServer(ok)
	if code := post(s, good); code != http.StatusOK {
		t.Errorf("a valid request got %d", code)
	}
	ok.cleanup()
	if len(ok.errors) > 0 {
		t.Errorf("a valid request failed the test: %q", ok.errors)
	}

	bad := &recordingTB{TB: t}
	s = NewTestServer(bad)
	if code := post(s, unpaired); code != http.StatusBadRequest {
		t.Errorf("an unpaired call got %d, want 400", code)
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], "c1") {
		t.Errorf("violations %q", v)
	}
	bad.cleanup()
	if len(bad.errors) != 1 || !strings.Contains(bad.errors[0], "these have none: c1") {
		t.Errorf("the test was not failed at cleanup: %q", bad.errors)
	}

	off := NewServer()
	defer off.Close()
	off.CheckRequests(false)
	if code := post(off, unpaired); code != http.StatusOK || len(off.Violations()) != 0 {
		t.Errorf("with checks off: %d, %q", code, off.Violations())
	}
}
