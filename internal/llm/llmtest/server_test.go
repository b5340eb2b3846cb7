package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// get sends a GET to path under the server's base URL and returns status
// and body.
func get(t *testing.T, s *Server, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// chatText posts a non-streaming request and returns the answer's text.
func chatText(t *testing.T, s *Server, body string) string {
	t.Helper()
	resp := post(t, t.Context(), s, body)
	defer resp.Body.Close()
	var c struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("status %d, decode: %v", resp.StatusCode, err)
	}
	return c.Choices[0].Message.Content
}

func TestModels(t *testing.T) {
	t.Parallel()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
	}
	tests := []struct {
		name   string
		models []string // nil keeps the default
		path   string
		status int
		want   []string // ids in the list, or the one model
	}{
		{name: "default list", path: "/models", status: 200, want: []string{"fake-model"}},
		{name: "configured list", models: []string{"a", "b"}, path: "/models", status: 200, want: []string{"a", "b"}},
		{name: "one model", models: []string{"a", "b"}, path: "/models/b", status: 200, want: []string{"b"}},
		{name: "unknown model", path: "/models/nope", status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer()
			defer s.Close()
			if tt.models != nil {
				s.SetModels(tt.models...)
			}
			status, body := get(t, s, tt.path)
			if status != tt.status {
				t.Fatalf("status = %d, want %d: %s", status, tt.status, body)
			}
			if status != 200 {
				return
			}
			var list struct {
				Object string  `json:"object"`
				Data   []model `json:"data"`
			}
			if strings.HasPrefix(tt.path, "/models/") {
				var m model
				if err := json.Unmarshal([]byte(body), &m); err != nil {
					t.Fatal(err)
				}
				list.Object, list.Data = "list", []model{m}
			} else if err := json.Unmarshal([]byte(body), &list); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range list.Data {
				if m.Object != "model" || m.OwnedBy != "fakellm" {
					t.Errorf("model %+v", m)
				}
				ids = append(ids, m.ID)
			}
			if list.Object != "list" || !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("got %s, want ids %q", body, tt.want)
			}
		})
	}
}

func TestRequestsRecorded(t *testing.T) {
	t.Parallel()
	s := NewServer()
	defer s.Close()

	get(t, s, "/models")
	body := `{
	  "model": "deepseek-chat", "stream": true, "stream_options": {"include_usage": true},
	  "max_completion_tokens": 512,
	  "messages": [
	    {"role": "system", "content": [{"type": "text", "text": "You are "}, {"type": "text", "text": "mx-claw."}]},
	    {"role": "user", "content": "list files"},
	    {"role": "assistant", "content": null, "reasoning_content": "should not be here",
	     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "a.go\nb.go"}
	  ],
	  "tools": [{"type": "function", "function": {"name": "ls"}}, {"type": "function", "function": {"name": "read"}}]
	}`
	resp := post(t, t.Context(), s, body)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	get(t, s, "/nowhere")

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(reqs))
	}
	for i, want := range []string{"GET /v1/models", "POST /v1/chat/completions", "GET /v1/nowhere"} {
		if got := reqs[i].Method + " " + reqs[i].Path; got != want {
			t.Errorf("request %d = %s, want %s", i, got, want)
		}
		if i > 0 && reqs[i].Time.Before(reqs[i-1].Time) {
			t.Errorf("request %d recorded out of order", i)
		}
	}
	if reqs[0].Chat != nil || reqs[2].Chat != nil {
		t.Error("non-chat request has Chat")
	}

	chats := s.ChatRequests()
	if len(chats) != 1 {
		t.Fatalf("%d chat requests, want 1", len(chats))
	}
	r := chats[0]
	if string(r.Body) != body || r.Size != len(body) || r.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("body or header not recorded: size %d, auth %q", r.Size, r.Header.Get("Authorization"))
	}
	want := &ChatRequest{
		Model: "deepseek-chat", Stream: true, IncludeUsage: true, MaxCompletionTokens: 512,
		Messages: []ChatMessage{
			{Role: "system", Content: "You are mx-claw."},
			{Role: "user", Content: "list files"},
			{Role: "assistant", Reasoning: "should not be here", ToolCalls: []ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "a.go\nb.go"},
		},
		NumMessages: 4,
		Tools:       []string{"ls", "read"},
	}
	if !reflect.DeepEqual(r.Chat, want) {
		t.Errorf("parsed request:\n got %+v\nwant %+v", r.Chat, want)
	}
}

func TestRecordBodiesOff(t *testing.T) {
	t.Parallel()
	s := NewServer()
	defer s.Close()
	s.RecordBodies(false)
	var mu sync.Mutex
	var hooked []int
	s.OnRequest(func(r *Request) {
		mu.Lock()
		hooked = append(hooked, len(r.Chat.Messages))
		mu.Unlock()
	})
	if got := chatText(t, s, chatBody(false, false)); got != "ok" {
		t.Errorf("answer %q", got)
	}
	r := s.ChatRequests()[0]
	if r.Body != nil || r.Size == 0 || r.Chat == nil || r.Chat.Messages != nil || r.Chat.NumMessages != 2 || len(r.Chat.Tools) != 1 {
		t.Errorf("recorded %+v, %+v; want no body or messages but size, count and tools", r, r.Chat)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(hooked, []int{2}) {
		t.Errorf("OnRequest saw %v, want the full request once", hooked)
	}
}

func TestQueueThenResponder(t *testing.T) {
	t.Parallel()
	s := NewServer(Text("first"))
	defer s.Close()
	s.Enqueue(Text("second"), Text("third"))
	if s.Pending() != 3 {
		t.Errorf("Pending = %d, want 3", s.Pending())
	}
	for _, want := range []string{"first", "second", "third", "ok", "ok"} {
		if got := chatText(t, s, chatBody(false, false)); got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
	}
	s.SetResponder(func(r *Request) Reply {
		return Text(fmt.Sprintf("%d messages, last %q", len(r.Chat.Messages), r.Chat.Messages[len(r.Chat.Messages)-1].Content))
	})
	if got, want := chatText(t, s, chatBody(false, false)), `2 messages, last "hello"`; got != want {
		t.Errorf("responder answer %q, want %q", got, want)
	}
	s.Enqueue(Text("queued wins"))
	if got := chatText(t, s, chatBody(false, false)); got != "queued wins" {
		t.Errorf("answer %q, want the queued reply", got)
	}
	s.SetResponder(nil)
	if got := chatText(t, s, chatBody(false, false)); got != "ok" {
		t.Errorf("answer %q after SetResponder(nil), want ok", got)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	s := NewServer(Text("kept"))
	defer s.Close()

	resp := post(t, t.Context(), s, `{"model": "m", "messages": [`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_request_error"`) {
		t.Errorf("malformed body: %d %s", resp.StatusCode, body)
	}
	if status, _ := get(t, s, "/chat/completions"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET chat: status %d", status)
	}
	if s.Pending() != 1 {
		t.Error("a bad request consumed a queued reply")
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	s := NewServer()
	defer s.Close()
	const n = 32
	for range n {
		s.Enqueue(Call("read", `{"path":"file.go"}`))
	}
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := tryPost(t.Context(), s.URL(), chatBody(true, true))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			events, err := readSSE(resp.Body)
			if err != nil {
				t.Error(err)
				return
			}
			a, err := tryAssemble(events)
			if err != nil || len(a.calls) != 1 || !a.done {
				t.Errorf("incomplete stream (%v): %+v", err, a.calls)
				return
			}
			ids <- a.calls[0].ID
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("call id %s given twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n || len(s.ChatRequests()) != n || s.Pending() != 0 {
		t.Errorf("%d ids, %d requests, %d pending", len(seen), len(s.ChatRequests()), s.Pending())
	}
}

func TestUnstartedHandler(t *testing.T) {
	t.Parallel()
	s := NewUnstarted(Text("via handler"))
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	if s.URL() != "" {
		t.Errorf("URL of an unstarted server = %q", s.URL())
	}
	resp, err := tryPost(t.Context(), hs.URL+"/v1", chatBody(false, false))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "via handler") {
		t.Errorf("answer %s", body)
	}
	s.Close()
	resp, err = tryPost(t.Context(), hs.URL+"/v1", chatBody(false, false))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after Close: status %d, want 503", resp.StatusCode)
	}
}

func TestCloseStopsListening(t *testing.T) {
	t.Parallel()
	s := NewServer()
	s.Close()
	s.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL()+"/models", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Error("closed server still answers")
	}
}

// TestCloseLeavesNoGoroutines is not parallel: it counts goroutines, and
// parallel tests only start once the sequential ones are done.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	before := runtime.NumGoroutine()

	s := NewServer(Text("done"), Reply{Text: "stuck", Hang: true}, Reply{Text: "slow", ChunkDelay: time.Hour})
	do := func() (*http.Response, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(chatBody(true, true)))
		return client.Do(req)
	}
	resp, err := do() // leaves an idle keep-alive connection
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var open []*http.Response // a hanging and a delayed stream
	for range 2 {
		resp, err := do()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}
	s.Close()
	for _, resp := range open {
		if _, err := io.Copy(io.Discard, resp.Body); err == nil {
			t.Error("stream open at Close ended cleanly")
		}
		resp.Body.Close()
	}
	tr.CloseIdleConnections()

	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after Close:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseConnections: told to, the server ends every connection after
// its answer, counts the connections and says when each was accepted.
func TestCloseConnections(t *testing.T) {
	t.Parallel()
	s := NewServer(Text("a"), Text("b"))
	defer s.Close()
	s.SetCloseConnections(true)
	for range 2 {
		resp := post(t, context.Background(), s, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !resp.Close {
			t.Error("the answer does not close its connection")
		}
	}
	if n := s.Connections(); n != 2 {
		t.Errorf("Connections() = %d, want 2", n)
	}
	for i, r := range s.ChatRequests() {
		if r.ConnAccepted.IsZero() || r.ConnAccepted.After(r.Time) {
			t.Errorf("request %d: connection accepted at %v, request at %v", i, r.ConnAccepted, r.Time)
		}
	}
}
