package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkStep measures one agent step against the server: a request of
// about 60 KB (tool schemas plus history) answered with a streamed tool
// call and a usage chunk, read to the end by a plain client.
func BenchmarkStep(b *testing.B) {
	s := NewServer()
	defer s.Close()
	s.RecordBodies(false)
	args := `{"path":"internal/agent/loop.go","old_string":"const Version1 = 1","new_string":"const Version1 = 2"}`
	s.SetResponder(func(*Request) Reply {
		return Reply{Text: "Editing the file now.", ToolCalls: []ToolCall{{Name: "edit", Arguments: args}}}
	})

	var msgs []map[string]any
	for i := range 40 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id, "type": "function",
			"function": map[string]any{"name": "read", "arguments": `{"path":"a.go"}`}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat("line of a file\n", 80+i)})
	}
	var tools []map[string]any
	for i := range 20 {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
			"name": "tool" + string(rune('a'+i)), "description": strings.Repeat("describes the tool ", 40),
		}})
	}
	body, _ := json.Marshal(map[string]any{
		"model": "bench", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": msgs, "tools": tools,
	})
	bodyText := string(body)
	b.SetBytes(int64(len(body)))
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(bodyText))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n == 0 {
			b.Fatal(n, err)
		}
	}
}
