package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// endless streams chunks made by piece until the client goes away, and
// reports through gone how many bytes it wrote by then.
func endless(piece func(i int) string, gone chan<- int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n := 0
		defer func() { gone <- n }()
		for i := 0; ; i++ {
			k, err := io.WriteString(w, "data: "+piece(i)+"\n\n")
			n += k
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	}
}

// TestAnswerPastCapIsAbandoned: a model that never stops talking is cut
// off at MaxAnswerBytes: the client stops reading (the server sees it go
// away soon after) and returns a TooLargeError, with no delta past the cap.
func TestAnswerPastCapIsAbandoned(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("x", 1000)
	gone := make(chan int, 1)
	srv, _ := scripted(t, endless(func(i int) string {
		field := "content"
		if i%2 == 0 {
			field = "reasoning_content"
		}
		return fmt.Sprintf(`{"choices":[{"index":0,"delta":{%q:%q}}]}`, field, text)
	}, gone))
	req := testRequest()
	req.MaxAnswerBytes = 64 << 10
	seen := 0
	resp, err := New(Config{BaseURL: srv.URL, Sleep: noSleep}).Stream(context.Background(), req, func(d llm.Delta) {
		seen += len(d.Text)
	})
	var tl *llm.TooLargeError
	if resp != nil || !errors.As(err, &tl) || tl.What != "answer" || tl.Limit != 64<<10 {
		t.Fatalf("got %v, %v; want a TooLargeError for the answer", resp, err)
	}
	if !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("Error() = %q does not name the limit", err)
	}
	if seen > req.MaxAnswerBytes {
		t.Errorf("%d bytes of deltas reported, past the %d-byte cap", seen, req.MaxAnswerBytes)
	}
	if n := <-gone; n > 16<<20 {
		t.Errorf("the server wrote %d bytes before the client went away", n)
	}
}

// TestArgumentsPastCapAreDropped: a call whose arguments pass
// MaxArgumentBytes comes back with TooLarge and no arguments; the other
// calls and the answer are whole.
func TestArgumentsPastCapAreDropped(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"writing"}}]}` + "\n\n")
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"big","function":{"name":"write_file","arguments":""}}]}}]}` + "\n\n")
	for range 100 {
		b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("a", 1000) + `"}}]}}]}` + "\n\n")
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"small","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}}]}` + "\n\n")
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	srv, _ := scripted(t, sseBody(b.String()))
	req := testRequest()
	req.MaxArgumentBytes = 10 << 10
	resp, err := New(Config{BaseURL: srv.URL, Sleep: noSleep}).Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "big", Name: "write_file", TooLarge: 100000}, {ID: "small", Name: "read_file", Arguments: `{"path":"a"}`}}
	if resp.Text != "writing" || len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != want[0] || resp.ToolCalls[1] != want[1] {
		t.Fatalf("response %+v, want text and calls %+v", resp, want)
	}
}

// TestEndlessArgumentsAreAbandoned: dropped arguments are read only up to
// llm.MaxDroppedBytes; past that the response is abandoned.
func TestEndlessArgumentsAreAbandoned(t *testing.T) {
	t.Parallel()
	piece := strings.Repeat("a", 64<<10)
	gone := make(chan int, 1)
	srv, _ := scripted(t, endless(func(i int) string {
		if i == 0 {
			return `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"write_file","arguments":""}}]}}]}`
		}
		return `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + piece + `"}}]}}]}`
	}, gone))
	req := testRequest()
	req.MaxArgumentBytes = 1 << 20
	resp, err := New(Config{BaseURL: srv.URL, Sleep: noSleep}).Stream(context.Background(), req, nil)
	var tl *llm.TooLargeError
	if resp != nil || !errors.As(err, &tl) || tl.What != "tool-call arguments" {
		t.Fatalf("got %v, %v; want a TooLargeError for the arguments", resp, err)
	}
	if n := <-gone; n > llm.MaxDroppedBytes+(16<<20) {
		t.Errorf("the server wrote %d bytes before the client went away", n)
	}
}
