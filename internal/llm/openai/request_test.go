package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// capture serves okStream and records each request's headers and body.
type capture struct {
	header http.Header
	body   []byte
	path   string
}

func captureServer(t *testing.T, got *capture) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.header = r.Header.Clone()
		got.path = r.URL.Path
		got.body, _ = io.ReadAll(r.Body)
		sseBody(okStream)(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	var got capture
	srv := captureServer(t, &got)
	req := &llm.Request{
		Model: "deepseek-chat",
		Messages: []llm.Message{
			{Role: "system", Content: "You are mx-claw.\n"},
			{Role: "user", Content: "Fix \"main.go\" <now> & then\ttest \u2028 é"},
			{Role: "assistant", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`},
				{ID: "call_2", Name: "grep", Arguments: `{"pattern":"func \\w+"}`},
			}},
			{Role: "tool", ToolCallID: "call_1", Content: "package main\n"},
			{Role: "tool", ToolCallID: "call_2", Content: ""},
			{Role: "assistant", Content: "Looking.", ToolCalls: []llm.ToolCall{{ID: "call_3", Name: "ls", Arguments: `{}`}}},
			{Role: "tool", ToolCallID: "call_3", Content: "a\nb"},
			{Role: "assistant", Content: ""},
		},
		Tools: []llm.Tool{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "ls"},
		},
		MaxTokens: 1024,
	}
	c := New(Config{BaseURL: srv.URL + "/v1/", Headers: map[string]string{"x-title": "mx-claw"}})
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.path)
	}
	if got.header.Get("Content-Type") != "application/json" || got.header.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", got.header)
	}
	if _, ok := got.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", got.header.Get("Authorization"))
	}
	if got.header.Get("X-Title") != "mx-claw" {
		t.Errorf("extra header missing: %v", got.header)
	}

	// The body must be exactly what this hand-written JSON says, once
	// both are normalised by encoding/json.
	const want = `{
	  "model": "deepseek-chat",
	  "messages": [
	    {"role": "system", "content": "You are mx-claw.\n"},
	    {"role": "user", "content": "Fix \"main.go\" <now> & then\ttest \u2028 é"},
	    {"role": "assistant", "content": null, "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"main.go\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"func \\\\w+\"}"}}
	    ]},
	    {"role": "tool", "content": "package main\n", "tool_call_id": "call_1"},
	    {"role": "tool", "content": "", "tool_call_id": "call_2"},
	    {"role": "assistant", "content": "Looking.", "tool_calls": [
	      {"id": "call_3", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "content": "a\nb", "tool_call_id": "call_3"},
	    {"role": "assistant", "content": ""}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
	      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
	    {"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}
	  ],
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_tokens": 1024
	}`
	if a, b := normalise(t, got.body), normalise(t, []byte(want)); a != b {
		t.Fatalf("body:\n got %s\nwant %s", a, b)
	}
}

func normalise(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestRequestAuthorization(t *testing.T) {
	t.Parallel()
	var got capture
	srv := captureServer(t, &got)
	c := New(Config{BaseURL: srv.URL + "/v1/chat/completions", APIKey: "sk-test"})
	if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); a != "Bearer sk-test" {
		t.Fatalf("Authorization = %q", a)
	}
	if got.path != "/v1/chat/completions" {
		t.Fatalf("path = %q", got.path)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tools", "max_tokens"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent although unset", k)
		}
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "plain", `quote " backslash \`, "ctl \x00\x01\x1f\x7f", "nl\r\n\t",
		"utf8 é 漢字 🙂", "\u2028\u2029", "<>&",
	} {
		checkAppendString(t, s)
	}
	if got := string(appendString(nil, "bad \xff byte")); got != `"bad \ufffd byte"` {
		t.Errorf("invalid UTF-8 became %s", got)
	}
}

func checkAppendString(t *testing.T, s string) {
	t.Helper()
	out := appendString(nil, s)
	var back string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("appendString(%q) = %s, invalid JSON: %v", s, out, err)
	}
	want := strings.ToValidUTF8(s, "\uFFFD")
	if back != want {
		t.Fatalf("appendString(%q) round-trips to %q", s, back)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\n\x00é\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("appendString(%q) = %s, invalid JSON: %v", s, out, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("appendString(%q) round-trips to %q", s, back)
		}
	})
}

func TestPlainASCIITable(t *testing.T) {
	t.Parallel()
	if len(plainASCII) != 256 {
		t.Fatalf("len(plainASCII) = %d", len(plainASCII))
	}
	for b := range 256 {
		want := b >= 0x20 && b < 0x80 && b != '"' && b != '\\'
		if got := plainASCII[b] == 1; got != want {
			t.Errorf("plainASCII[%#x] = %v, want %v", b, got, want)
		}
	}
}

func TestHasSpecial(t *testing.T) {
	t.Parallel()
	// Every byte value in every position, among plain neighbours.
	for pos := range 8 {
		for b := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			want := plainASCII[b] != 1
			if got := hasSpecial(le64(string(w))); got != want {
				t.Fatalf("hasSpecial(%q) = %v, want %v", w, got, want)
			}
		}
	}
	if hasSpecial(le64("plain ok")) {
		t.Fatal("plain word reported special")
	}
}
