package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm"
)

func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func testRequest() *llm.Request {
	return &llm.Request{
		Model:    "test-model",
		Messages: []llm.Message{{Role: "user", Content: "hi"}},
	}
}

// sleepRecorder is an injected Sleep that records the delays.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// scripted serves the i-th request with handlers[i] (the last one for any
// later request) and counts requests.
func scripted(t *testing.T, handlers ...http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		handlers[min(i, len(handlers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func sseBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

const okStream = `data: {"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}

data: {"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}

data: [DONE]

`

// retries collects the DeltaRetry calls.
type retries struct{ got []llm.Delta }

func (r *retries) onDelta(d llm.Delta) {
	if d.Kind == llm.DeltaRetry {
		r.got = append(r.got, d)
	}
}

func TestRetryAfterThenSuccess(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t,
		status(429, map[string]string{"Retry-After": "3"}, `{"error":{"message":"Rate limit reached","type":"requests"}}`),
		sseBody(okStream),
	)
	var sl sleepRecorder
	var rs retries
	c := New(Config{BaseURL: srv.URL, Sleep: sl.sleep})
	resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || hits.Load() != 2 {
		t.Fatalf("Text = %q after %d requests", resp.Text, hits.Load())
	}
	if got := sl.get(); len(got) != 1 || got[0] != 3*time.Second {
		t.Fatalf("slept %v, want [3s]", got)
	}
	if len(rs.got) != 1 {
		t.Fatalf("%d retry deltas, want 1", len(rs.got))
	}
	d := rs.got[0]
	var apiErr *llm.APIError
	if d.Attempt != 1 || d.Delay != int64(3*time.Second) || !errors.As(d.Err, &apiErr) || apiErr.Status != 429 || apiErr.Message != "Rate limit reached" {
		t.Fatalf("retry delta = %+v", d)
	}
}

func TestRetryAfterMillisecondsAndDate(t *testing.T) {
	t.Parallel()
	date := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	srv, _ := scripted(t,
		status(503, map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, ""),
		status(503, map[string]string{"Retry-After": date}, ""),
		sseBody(okStream),
	)
	var sl sleepRecorder
	c := New(Config{BaseURL: srv.URL, Sleep: sl.sleep})
	if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	got := sl.get()
	if len(got) != 2 || got[0] != 1500*time.Millisecond || got[1] < 15*time.Second || got[1] > 20*time.Second {
		t.Fatalf("slept %v, want [1.5s ~20s]", got)
	}
}

func TestRetryServerErrorsThenSuccess(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t,
		status(500, nil, `{"error":{"message":"internal"}}`),
		status(502, nil, "<html>bad gateway</html>"),
		sseBody(okStream),
	)
	var sl sleepRecorder
	var rs retries
	c := New(Config{
		BaseURL: srv.URL,
		Sleep:   sl.sleep,
		Retry:   llm.RetryPolicy{MaxAttempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Rand: func() float64 { return 0.5 }},
	})
	resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || hits.Load() != 3 {
		t.Fatalf("Text = %q after %d requests", resp.Text, hits.Load())
	}
	// Equal jitter at 0.5: 50ms + 25ms, then 100ms + 50ms.
	want := []time.Duration{75 * time.Millisecond, 150 * time.Millisecond}
	if got := sl.get(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("slept %v, want %v", got, want)
	}
	if len(rs.got) != 2 || rs.got[0].Attempt != 1 || rs.got[1].Attempt != 2 {
		t.Fatalf("retry deltas = %+v", rs.got)
	}
	if !strings.Contains(rs.got[1].Err.Error(), "502 Bad Gateway: <html>bad gateway</html>") {
		t.Fatalf("second retry error = %v", rs.got[1].Err)
	}
}

func TestRetryGivesUpWithLastError(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t,
		status(503, nil, "first"),
		status(529, nil, "last"),
	)
	var sl sleepRecorder
	c := New(Config{BaseURL: srv.URL, Sleep: sl.sleep, Retry: llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}})
	_, err := c.Stream(context.Background(), testRequest(), nil)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 529 || apiErr.Body != "last" {
		t.Fatalf("err = %v, want the last attempt's 529", err)
	}
	if hits.Load() != 3 || len(sl.get()) != 2 {
		t.Fatalf("%d requests, %d sleeps; want 3, 2", hits.Load(), len(sl.get()))
	}
}

func TestNotRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{
			name:    "400",
			handler: status(400, map[string]string{"Content-Type": "application/json"}, `{"error":{"message":"Invalid 'messages': empty array.","type":"invalid_request_error","code":"empty_array"}}`),
			wantErr: "provider returned 400 Bad Request: Invalid 'messages': empty array.",
		},
		{
			name:    "401",
			handler: status(401, nil, `{"error":{"message":"Incorrect API key provided.","code":"invalid_api_key"}}`),
			wantErr: "provider returned 401 Unauthorized: Incorrect API key provided.",
		},
		{
			name:    "quota",
			handler: status(429, nil, `{"error":{"message":"You exceeded your current quota.","code":"insufficient_quota"}}`),
			wantErr: "provider returned 429 Too Many Requests: You exceeded your current quota.",
		},
		{
			name:    "x-should-retry false",
			handler: status(500, map[string]string{"X-Should-Retry": "false"}, "no"),
			wantErr: "provider returned 500 Internal Server Error: no",
		},
		{
			name:    "retry-after beyond the bound",
			handler: status(429, map[string]string{"Retry-After": "3600"}, "come back later"),
			wantErr: "provider returned 429 Too Many Requests: come back later (it asks to wait 1h before the next request)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, hits := scripted(t, tt.handler, sseBody(okStream))
			var rs retries
			c := New(Config{BaseURL: srv.URL, Sleep: noSleep, APIKey: "sk-secret-key"})
			resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
			if err == nil || resp != nil {
				t.Fatalf("got %+v, %v; want an error", resp, err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("Error() = %q, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Errorf("the error shows the API key: %v", err)
			}
			if hits.Load() != 1 || len(rs.got) != 0 {
				t.Errorf("%d requests and %d retries, want 1 and 0", hits.Load(), len(rs.got))
			}
		})
	}
}

func TestConnectionRefusedRetriedThenFails(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	var sl sleepRecorder
	var rs retries
	c := New(Config{BaseURL: "http://" + addr + "/v1", Sleep: sl.sleep, Retry: llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second}})
	_, err = c.Stream(context.Background(), testRequest(), rs.onDelta)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want connection refused", err)
	}
	if len(sl.get()) != 2 || len(rs.got) != 2 || rs.got[1].Attempt != 2 {
		t.Fatalf("%d sleeps, retry deltas %+v; want 2 of each", len(sl.get()), rs.got)
	}
}

func TestEOFBeforeHeadersRetried(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t,
		func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		sseBody(okStream),
	)
	var rs retries
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || hits.Load() != 2 || len(rs.got) != 1 {
		t.Fatalf("Text %q, %d requests, %d retries", resp.Text, hits.Load(), len(rs.got))
	}
}

func TestCutMidToolCallNotRetried(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"edit_file","arguments":""}}]}}]}`+"\n\n")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"ma"}}]}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drops the connection mid-body
	})
	var rs retries
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	var se *llm.StreamError
	if resp != nil || !errors.As(err, &se) || !errors.Is(err, llm.ErrIncompleteStream) {
		t.Fatalf("got %+v, %v; want a StreamError for an incomplete stream", resp, err)
	}
	if !strings.Contains(err.Error(), "stream ended before the response finished") {
		t.Errorf("Error() = %q", err)
	}
	if hits.Load() != 1 || len(rs.got) != 0 {
		t.Fatalf("%d requests and %d retries, want 1 and 0", hits.Load(), len(rs.got))
	}
}

func TestCancelWhileStreamHangs(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv, _ := scripted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"thinking"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var canceledAt time.Time
	c := New(Config{BaseURL: srv.URL})
	resp, err := c.Stream(ctx, testRequest(), func(d llm.Delta) {
		if d.Kind == llm.DeltaText {
			canceledAt = time.Now()
			time.AfterFunc(20*time.Millisecond, cancel)
		}
	})
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want context.Canceled", resp, err)
	}
	if d := time.Since(canceledAt); d > 2*time.Second {
		t.Fatalf("returned %v after the cancel", d)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t, status(503, map[string]string{"Retry-After": "30"}, ""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(Config{BaseURL: srv.URL}) // the real Sleep
	start := time.Now()
	_, err := c.Stream(ctx, testRequest(), func(d llm.Delta) {
		if d.Kind == llm.DeltaRetry {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > 5*time.Second || hits.Load() != 1 {
		t.Fatalf("took %v and %d requests", time.Since(start), hits.Load())
	}
}

func TestStreamShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    llm.Response
		wantErr string
		isErr   error
	}{
		{
			name: "finish and usage without [DONE]",
			body: `data: {"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}` + "\n\n",
			want: llm.Response{Text: "hi", FinishReason: "stop", Model: "m", HasUsage: true, Usage: llm.Usage{InputTokens: 5, OutputTokens: 2}},
		},
		{
			name:    "EOF without finish or [DONE]",
			body:    `data: {"choices":[{"index":0,"delta":{"content":"hal"}}]}` + "\n\n",
			wantErr: "stream ended before the response finished (no finish_reason and no [DONE])",
			isErr:   llm.ErrIncompleteStream,
		},
		{
			name:    "empty body",
			body:    "",
			wantErr: "stream ended before the response finished (no data)",
			isErr:   llm.ErrIncompleteStream,
		},
		{
			name: "keep-alives, CRLF, usage null, role-only delta",
			body: ": keep-alive\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}],"usage":null}` + "\r\n\r\n" +
				": OPENROUTER PROCESSING\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"reasoning":"hmm"}}],"usage":null}` + "\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"content":"yes"},"finish_reason":"stop"}],"usage":null}` + "\r\n\r\n" +
				"data: [DONE]\r\n\r\n",
			want: llm.Response{Text: "yes", Reasoning: "hmm", FinishReason: "stop"},
		},
		{
			name: "both reasoning fields: reasoning_content wins",
			body: `data: {"choices":[{"index":0,"delta":{"reasoning_content":"a","reasoning":"a"}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{"reasoning":"b"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			want: llm.Response{Reasoning: "ab", FinishReason: "stop"},
		},
		{
			name: "whole tool call in one delta, no index (Ollama style)",
			body: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_x","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":8},"completion_tokens_details":{"reasoning_tokens":1}}}` + "\n\n" +
				"data: [DONE]\n\n",
			want: llm.Response{
				ToolCalls:    []llm.ToolCall{{ID: "call_x", Name: "ls", Arguments: `{"path":"."}`}},
				FinishReason: "tool_calls",
				HasUsage:     true,
				Usage:        llm.Usage{InputTokens: 9, OutputTokens: 4, CachedTokens: 8, ReasoningTokens: 1},
			},
		},
		{
			name: "[DONE] without finish_reason is accepted",
			body: `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n" + "data: [DONE]\n\n",
			want: llm.Response{Text: "x"},
		},
		{
			name:    "error payload without event name",
			body:    `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}` + "\n\n" + `data: {"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}` + "\n\n",
			wantErr: "provider error during stream: overloaded (code overloaded)",
		},
		{
			name:    "error event with plain text",
			body:    "event: error\ndata: upstream went away\n\n",
			wantErr: "provider error during stream: upstream went away",
		},
		{
			name:    "invalid chunk",
			body:    `data: {"choices":[{"index":0,"delta":{"content":"x"` + "\n\n",
			wantErr: `invalid stream chunk: unexpected EOF: {"choices":[{"index":0,"delta":{"content":"x"`,
		},
		{
			name:    "two values in one event",
			body:    `data: {"choices":[]} {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}` + "\n\n",
			wantErr: `invalid stream chunk: data after the JSON value: {"choices":[]} {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`,
		},
		{
			name:    "wrong type",
			body:    `data: {"choices":[{"index":0,"delta":{"content":["x"]}}]}` + "\n\n",
			wantErr: `invalid stream chunk: json: cannot unmarshal array into Go struct field`,
		},
		{
			name: "named events other than message and error are skipped",
			body: "event: ping\ndata: ping\n\n" +
				"event: message\n" + `data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			want: llm.Response{Text: "x", FinishReason: "stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := scripted(t, sseBody(tt.body))
			c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
			resp, err := c.Stream(context.Background(), testRequest(), nil)
			if tt.wantErr != "" {
				if resp != nil || err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error starting %q", resp, err, tt.wantErr)
				}
				var se *llm.StreamError
				if !errors.As(err, &se) {
					t.Errorf("err is %T, want *llm.StreamError", err)
				}
				if tt.isErr != nil && !errors.Is(err, tt.isErr) {
					t.Errorf("errors.Is(err, %v) = false", tt.isErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(resp)
			wantJSON, _ := json.Marshal(tt.want)
			if string(gotJSON) != string(wantJSON) {
				t.Fatalf("response:\n got %s\nwant %s", gotJSON, wantJSON)
			}
		})
	}
}

func TestJSONInsteadOfStream(t *testing.T) {
	t.Parallel()
	srv, _ := scripted(t, status(200, map[string]string{"Content-Type": "application/json"}, `{"error":{"message":"model is loading","code":"loading"}}`))
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	_, err := c.Stream(context.Background(), testRequest(), nil)
	var se *llm.StreamError
	if !errors.As(err, &se) || se.Message != "model is loading" {
		t.Fatalf("err = %v", err)
	}
}

func TestConnectionReusedAfterDone(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(sseBody(okStream))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, HTTPClient: srv.Client()})
	for range 5 {
		if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("5 requests used %d connections, want 1", n)
	}
}

func TestBadBaseURLNotRetried(t *testing.T) {
	t.Parallel()
	var rs retries
	c := New(Config{BaseURL: "127.0.0.1:1/v1", Sleep: noSleep})
	_, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	if err == nil || len(rs.got) != 0 {
		t.Fatalf("err = %v after %d retries; want an error and no retry", err, len(rs.got))
	}
}
