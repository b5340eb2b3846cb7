package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	openAI400 := `{
  "error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model.",
    "type": "invalid_request_error",
    "param": "max_tokens",
    "code": "unsupported_parameter"
  }
}`
	tests := []struct {
		name       string
		reply      Reply
		wantType   string // Content-Type
		wantRetry  string
		wantErrTyp string // error.type, if the body is JSON
		wantBody   string // exact body, if set
	}{
		{
			name:       "rate limited with Retry-After",
			reply:      Reply{Status: 429, RetryAfter: "2"},
			wantType:   "application/json",
			wantRetry:  "2",
			wantErrTyp: "rate_limit_error",
		},
		{
			name:       "server error",
			reply:      Reply{Status: 503},
			wantType:   "application/json",
			wantErrTyp: "server_error",
		},
		{
			name:       "custom JSON body",
			reply:      Reply{Status: 400, Body: openAI400},
			wantType:   "application/json",
			wantErrTyp: "invalid_request_error",
			wantBody:   openAI400,
		},
		{
			name:     "plain-text body",
			reply:    Reply{Status: 502, Body: "<html>Bad Gateway</html>"},
			wantType: "text/plain; charset=utf-8",
			wantBody: "<html>Bad Gateway</html>",
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				t.Parallel()
				s := NewServer(tt.reply)
				defer s.Close()
				resp := post(t, t.Context(), s, chatBody(stream, true))
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tt.reply.Status {
					t.Errorf("status = %d, want %d", resp.StatusCode, tt.reply.Status)
				}
				if got := resp.Header.Get("Content-Type"); got != tt.wantType {
					t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
				}
				if got := resp.Header.Get("Retry-After"); got != tt.wantRetry {
					t.Errorf("Retry-After = %q, want %q", got, tt.wantRetry)
				}
				if tt.wantBody != "" && string(body) != tt.wantBody {
					t.Errorf("body = %q, want %q", body, tt.wantBody)
				}
				if tt.wantErrTyp != "" {
					var e struct {
						Error struct{ Message, Type string }
					}
					if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Type != tt.wantErrTyp {
						t.Errorf("error body %s (%v), want type %q and a message", body, err, tt.wantErrTyp)
					}
				}
			})
		}
	}
}

func TestCutMidArguments(t *testing.T) {
	t.Parallel()
	args := `{"path":"internal/agent/loop.go","old_string":"return nil","new_string":"return err"}`
	tests := []struct {
		name  string
		reply Reply
	}{
		{"tool call", Reply{Text: "Editing.", ToolCalls: []ToolCall{{Name: "edit", Arguments: args}, {Name: "ls", Arguments: "{}"}}, CutMidArguments: true}},
		{"text only", Reply{Text: "a text that is cut somewhere in the middle", CutMidArguments: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(tt.reply)
			defer s.Close()
			events, err := streamEvents(t, s, true)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("stream ended with %v, want an unexpected EOF", err)
			}
			a := assemble(t, events)
			if a.done || a.finish != "" {
				t.Errorf("cut stream has [DONE] %v, finish_reason %q", a.done, a.finish)
			}
			whole, got := tt.reply.Text, a.text
			if len(tt.reply.ToolCalls) > 0 {
				if a.text != tt.reply.Text || len(a.calls) != 1 {
					t.Fatalf("got text %q and %d calls before the cut", a.text, len(a.calls))
				}
				whole, got = args, a.calls[0].Arguments
			}
			if !strings.HasPrefix(whole, got) || len(got) < len(whole)/3 || len(got) > 2*len(whole)/3 {
				t.Errorf("cut after %q, want about half of %q", got, whole)
			}
		})
	}

	t.Run("not streaming", func(t *testing.T) {
		t.Parallel()
		s := NewServer(Reply{ToolCalls: []ToolCall{{Name: "edit", Arguments: args}}, CutMidArguments: true})
		defer s.Close()
		resp := post(t, t.Context(), s, chatBody(false, false))
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) == 0 || json.Valid(body) {
			t.Errorf("read %d bytes, err %v; want part of a body and an unexpected EOF", len(body), err)
		}
	})
}

func TestHang(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     Reply
		wantFirst string // content of the second chunk, if any
		byClose   bool   // unblocked by Close rather than by the client
	}{
		{name: "client cancels", reply: Reply{Text: "hello world", Hang: true}, wantFirst: "he"},
		{name: "server closes", reply: Reply{Text: "hello world", Hang: true}, wantFirst: "he", byClose: true},
		{name: "no text", reply: Reply{ToolCalls: []ToolCall{{Name: "x", Arguments: "{}"}}, Hang: true}, byClose: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(tt.reply)
			defer s.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			resp := post(t, ctx, s, chatBody(true, true))
			defer resp.Body.Close()

			// Read the events sent before the hang, then check that no
			// more come.
			br := bufio.NewReader(resp.Body)
			want := 1
			if tt.wantFirst != "" {
				want = 2
			}
			var chunks []chunk
			for len(chunks) < want {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("after %d chunks: %v", len(chunks), err)
				}
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					chunks = append(chunks, decodeChunk(t, data))
				}
			}
			if d := chunks[0].Choices[0].Delta; d.Role == nil || *d.Role != "assistant" {
				t.Errorf("first chunk is not the role chunk")
			}
			if want == 2 {
				if c := chunks[1].Choices[0].Delta.Content; c == nil || *c != tt.wantFirst {
					t.Errorf("second chunk content = %v, want %q", c, tt.wantFirst)
				}
			}
			rest := make(chan error, 1)
			go func() {
				_, err := io.ReadAll(br)
				rest <- err
			}()
			select {
			case err := <-rest:
				t.Fatalf("stream went on after the first chunks (%v)", err)
			case <-time.After(50 * time.Millisecond):
			}

			start := time.Now()
			if tt.byClose {
				s.Close()
			} else {
				cancel()
			}
			select {
			case err := <-rest:
				if err == nil {
					t.Error("hung stream ended cleanly, want a broken connection")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("stream still hangs")
			}
			s.Close() // must not wait for anything now
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("unblocking took %v", d)
			}
		})
	}

	t.Run("not streaming", func(t *testing.T) {
		t.Parallel()
		s := NewServer(Reply{Text: "never", Hang: true})
		got := make(chan error, 1)
		go func() {
			resp, err := tryPost(t.Context(), s.URL(), chatBody(false, false))
			if err == nil {
				resp.Body.Close()
			}
			got <- err
		}()
		for len(s.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-got:
			t.Fatalf("request finished before Close: %v", err)
		case <-time.After(30 * time.Millisecond):
		}
		start := time.Now()
		s.Close()
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Close took %v", d)
		}
		select {
		case err := <-got:
			if err == nil {
				t.Error("hung request succeeded")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("request still hangs after Close")
		}
	})
}

func TestErrorEvent(t *testing.T) {
	t.Parallel()
	s := NewServer(
		Reply{Reasoning: "thinking", Text: "partial answer", ToolCalls: []ToolCall{{Name: "x", Arguments: "{}"}}, ErrorEvent: "tool_use_failed: bad schema"},
		Reply{ErrorEvent: "overloaded"},
	)
	defer s.Close()

	events, err := streamEvents(t, s, true)
	if err != nil {
		t.Fatalf("stream ended with %v, want a clean end", err)
	}
	a := assemble(t, events)
	if a.text != "partial answer" || a.reasoning != "thinking" {
		t.Errorf("before the error: text %q, reasoning %q", a.text, a.reasoning)
	}
	if a.done || a.finish != "" || len(a.calls) != 0 {
		t.Errorf("after the error: [DONE] %v, finish %q, %d calls", a.done, a.finish, len(a.calls))
	}
	last := events[len(events)-1]
	var e struct {
		Error struct{ Message string }
	}
	if last.Name != "error" || json.Unmarshal([]byte(last.Data), &e) != nil || e.Error.Message != "tool_use_failed: bad schema" {
		t.Errorf("last event = %+v, want event: error with the message", last)
	}

	resp := post(t, t.Context(), s, chatBody(false, false))
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "overloaded") {
		t.Errorf("not streaming: %d %s", resp.StatusCode, body)
	}
}

func TestChunkDelay(t *testing.T) {
	t.Parallel()
	t.Run("slows the stream", func(t *testing.T) {
		t.Parallel()
		const d = 15 * time.Millisecond
		s := NewServer(Reply{Text: "four pieces of text", ChunkDelay: d})
		defer s.Close()
		start := time.Now()
		events, err := streamEvents(t, s, false)
		if err != nil {
			t.Fatal(err)
		}
		// Role, keep-alive, 4 text pieces, finish and [DONE]: 7 pauses.
		if len(events) != 8 {
			t.Fatalf("got %d events, want 8", len(events))
		}
		if got := time.Since(start); got < 7*d {
			t.Errorf("stream took %v, want at least %v", got, 7*d)
		}
	})
	t.Run("Close interrupts", func(t *testing.T) {
		t.Parallel()
		s := NewServer(Reply{Text: "slow", ChunkDelay: time.Hour})
		resp := post(t, t.Context(), s, chatBody(true, false))
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s.Close()
		if _, err := io.ReadAll(br); err == nil {
			t.Error("interrupted stream ended cleanly")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Close took %v", d)
		}
	})
}
