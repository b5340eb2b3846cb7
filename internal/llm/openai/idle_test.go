package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// silentAfterPart sends part of an answer and then nothing until the
// client goes away.
func silentAfterPart(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"half an ans"}}]}`+"\n\n")
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// TestStallRetriedThenAnswered has a provider go silent mid-answer: the
// attempt is cut after the idle timeout and sent again, announced as a
// retry, and the second answer is the response.
func TestStallRetriedThenAnswered(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t, silentAfterPart, sseBody(okStream))
	var rs retries
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep, IdleTimeout: 150 * time.Millisecond})
	start := time.Now()
	resp, err := c.Stream(context.Background(), testRequest(), rs.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || hits.Load() != 2 {
		t.Errorf("text %q after %d requests; want the second answer", resp.Text, hits.Load())
	}
	var se *llm.StallError
	if len(rs.got) != 1 || !errors.As(rs.got[0].Err, &se) || !se.Started {
		t.Errorf("retries %+v; want one for a stall mid-answer", rs.got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestStallGivesUpWithStallError stalls on every attempt, before the
// headers: the error says the provider sent nothing and for how long.
func TestStallGivesUpWithStallError(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leave
		<-r.Context().Done()
	})
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep, IdleTimeout: 100 * time.Millisecond,
		Retry: llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}})
	_, err := c.Stream(context.Background(), testRequest(), nil)
	var se *llm.StallError
	if !errors.As(err, &se) || se.Started || se.After != 100*time.Millisecond {
		t.Fatalf("err = %v, want a StallError before the answer", err)
	}
	if hits.Load() != 2 {
		t.Errorf("%d requests, want 2", hits.Load())
	}
}

// TestSlowButSteadyStreamNotStalled sends a piece every 200ms for longer
// than the idle timeout in total: each piece pushes the deadline back.
func TestSlowButSteadyStreamNotStalled(t *testing.T) {
	t.Parallel()
	srv, hits := scripted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(200 * time.Millisecond)
		}
		_, _ = io.WriteString(w, okStream)
	})
	// 1.6s in all, more than the idle timeout, never silent for more
	// than a fifth of it (room for a loaded machine: a run of the whole
	// suite on a busy 2-core machine once took over 500ms to the first
	// piece).
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep, IdleTimeout: time.Second})
	resp, err := c.Stream(context.Background(), testRequest(), nil)
	if err != nil || resp.Text != "xxxxxxxxok" || hits.Load() != 1 {
		t.Fatalf("resp %+v, err %v, %d requests", resp, err, hits.Load())
	}
}
