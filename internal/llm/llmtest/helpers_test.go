package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event, or one comment line.
type event struct {
	Name    string // the event: field, "" for plain data
	Data    string
	Comment string // set for a comment line, which is reported on its own
}

// readSSE reads events until EOF. It returns what it read and the read
// error, nil for a clean EOF.
func readSSE(r io.Reader) ([]event, error) {
	var out []event
	var cur event
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != nil || cur.Name != "" {
				cur.Data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = event{}, nil
		case strings.HasPrefix(line, ":"):
			out = append(out, event{Comment: strings.TrimSpace(line[1:])})
		case strings.HasPrefix(line, "event:"):
			cur.Name = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
	return out, sc.Err()
}

// chunk is a chat.completion.chunk as a client decodes it.
type chunk struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index int `json:"index"`
		Delta struct {
			Role      *string `json:"role"`
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning_content"`
			ToolCalls []struct {
				Index    *int    `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

// decodeChunk decodes the data of a chunk event strictly.
func decodeChunk(t *testing.T, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("chunk is not JSON: %v\n%s", err, data)
	}
	return c
}

// chatBody is a small chat-completions request body.
func chatBody(stream, includeUsage bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":          "test-model",
		"stream":         stream,
		"stream_options": map[string]any{"include_usage": includeUsage},
		"messages": []map[string]any{
			{"role": "system", "content": "You are a test."},
			{"role": "user", "content": "hello"},
		},
		"tools": []map[string]any{
			{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{}}},
		},
	})
	return string(b)
}

// post sends body to the chat endpoint of s. The caller closes the body.
func post(t *testing.T, ctx context.Context, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := tryPost(ctx, s.URL(), body)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	return resp
}

// tryPost is post for goroutines other than the test's, and for servers
// other than a Server; base is the URL ending in /v1.
func tryPost(ctx context.Context, base, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer test-key")
	return http.DefaultClient.Do(req)
}

// streamEvents posts a streaming request to s and reads the whole stream.
func streamEvents(t *testing.T, s *Server, includeUsage bool) ([]event, error) {
	t.Helper()
	resp := post(t, t.Context(), s, chatBody(true, includeUsage))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return readSSE(resp.Body)
}

// assembled is what a client would assemble from a stream's chunks.
type assembled struct {
	chunks    []chunk
	text      string
	reasoning string
	calls     []ToolCall
	argPieces []int // argument deltas per call
	finish    string
	done      bool
	keepAlive bool
}

// assemble decodes the events of a chat stream.
func assemble(t *testing.T, events []event) assembled {
	t.Helper()
	a, err := tryAssemble(events)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryAssemble is assemble for goroutines other than the test's.
func tryAssemble(events []event) (assembled, error) {
	var a assembled
	for _, e := range events {
		switch {
		case e.Comment != "":
			a.keepAlive = a.keepAlive || e.Comment == "keep-alive"
			continue
		case e.Name != "":
			continue
		case e.Data == "[DONE]":
			a.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(e.Data), &c); err != nil {
			return a, fmt.Errorf("chunk is not JSON: %w\n%s", err, e.Data)
		}
		a.chunks = append(a.chunks, c)
		for _, ch := range c.Choices {
			d := ch.Delta
			if d.Content != nil {
				a.text += *d.Content
			}
			if d.Reasoning != nil {
				a.reasoning += *d.Reasoning
			}
			for _, tc := range d.ToolCalls {
				if tc.Index == nil {
					return a, fmt.Errorf("tool-call delta without index: %s", e.Data)
				}
				i := *tc.Index
				if i > len(a.calls) || i < 0 {
					return a, fmt.Errorf("tool-call index %d out of order: %s", i, e.Data)
				}
				if i == len(a.calls) {
					a.calls = append(a.calls, ToolCall{})
					a.argPieces = append(a.argPieces, 0)
				}
				if tc.ID != nil {
					a.calls[i].ID = *tc.ID
				}
				if tc.Function.Name != nil {
					a.calls[i].Name = *tc.Function.Name
				}
				if p := tc.Function.Arguments; p != nil {
					a.calls[i].Arguments += *p
					if *p != "" {
						a.argPieces[i]++
					}
				}
			}
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
			}
		}
	}
	return a, nil
}
