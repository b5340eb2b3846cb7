package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// benchStream is a 20-chunk stream: a role chunk, 8 text pieces, a tool
// call whose arguments come in 8 pieces, and a finish chunk carrying usage
// (DeepSeek style), then [DONE].
func benchStream() []byte {
	var b bytes.Buffer
	const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346176,"model":"bench-model","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":`
	const tail = `,"logprobs":null,"finish_reason":null}]}` + "\n\n"
	b.WriteString(head + `{"role":"assistant","content":""}` + tail)
	for _, w := range []string{"Let", " me", " look", " at", " the", " file", " first", "."} {
		fmt.Fprintf(&b, "%s{\"content\":%q}%s", head, w, tail)
	}
	b.WriteString(head + `{"tool_calls":[{"index":0,"id":"call_bench_1","type":"function","function":{"name":"read_file","arguments":""}}]}` + tail)
	for _, p := range []string{`{"`, `path`, `":"`, `internal`, `/llm`, `/llm`, `.go`, `"}`} {
		q, _ := json.Marshal(p)
		fmt.Fprintf(&b, "%s{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":%s}}]}%s", head, q, tail)
	}
	b.WriteString(head + `{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5120,"completion_tokens":42,"total_tokens":5162,"prompt_tokens_details":{"cached_tokens":4096},"prompt_cache_hit_tokens":4096,"prompt_cache_miss_tokens":1024}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// benchRequest looks like a request a few steps into a turn: a system
// prompt, 12 messages with tool calls and results, and 8 tools.
func benchRequest() *llm.Request {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file, relative to the workspace root."},"offset":{"type":"integer","description":"First line to read, from 1."},"limit":{"type":"integer","description":"How many lines to read."}},"required":["path"],"additionalProperties":false}`)
	req := &llm.Request{Model: "bench-model", MaxTokens: 4096}
	req.Messages = append(req.Messages,
		llm.Message{Role: "system", Content: strings.Repeat("You are mx-claw, a coding agent. Follow the rules.\n", 40)},
		llm.Message{Role: "user", Content: "Bump the version constants in internal/llm and run the tests."},
	)
	for i := range 5 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"internal/llm/llm.go"}`}}},
			llm.Message{Role: "tool", ToolCallID: id, Content: strings.Repeat("\tfmt.Println(\"line of \\\"code\\\"\")\n", 60)},
		)
	}
	for i := range 8 {
		req.Tools = append(req.Tools, llm.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "Reads a file of the workspace and returns its numbered lines.", Parameters: schema})
	}
	return req
}

// memTransport answers every request with the same stream, in memory, so
// the benchmark measures the client and not the network.
type memTransport struct{ stream []byte }

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(m.stream)),
		Request:    r,
	}, nil
}

func checkBenchResponse(b *testing.B, resp *llm.Response, err error) {
	if err != nil {
		b.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"path":"internal/llm/llm.go"}` || resp.Text != "Let me look at the file first." {
		b.Fatalf("bad response %+v", resp)
	}
}

// BenchmarkStream is the client's cost for one agent step: building the
// request body and decoding a 20-chunk stream with a tool call.
func BenchmarkStream(b *testing.B) {
	req := benchRequest()
	c := New(Config{BaseURL: "http://bench.invalid/v1", HTTPClient: &http.Client{Transport: memTransport{benchStream()}}})
	var deltas int
	onDelta := func(llm.Delta) { deltas++ }
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Stream(context.Background(), req, onDelta)
		checkBenchResponse(b, resp, err)
	}
}

// BenchmarkStreamHTTP is BenchmarkStream over a loopback HTTP server.
func BenchmarkStreamHTTP(b *testing.B) {
	stream := benchStream()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	}))
	defer srv.Close()
	req := benchRequest()
	c := New(Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Stream(context.Background(), req, nil)
		checkBenchResponse(b, resp, err)
	}
}

// BenchmarkRequestBody is the body-building part of BenchmarkStream.
func BenchmarkRequestBody(b *testing.B) {
	req := benchRequest()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(appendRequest(make([]byte, 0, requestSize(req)), req))
	}
	b.SetBytes(int64(n))
}
