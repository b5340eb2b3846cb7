package agent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
)

// warningFails is a store that cannot store warnings.
type warningFails struct{ store.Store }

func (w warningFails) AppendBatch(ctx context.Context, sessionID string, b store.Batch) error {
	for _, e := range b.Events {
		if e.Type == protocol.EventWarning {
			return errors.New("disk full")
		}
	}
	return w.Store.AppendBatch(ctx, sessionID, b)
}

// syncBuffer is a buffer the logger may write from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A warning that cannot be stored does not end the turn, and is logged
// rather than dropped.
func TestUnstoredWarningIsLogged(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	f := newWrappedFixture(t, Options{
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
		Context: func(string) (string, []string) { return "# AGENTS.md", []string{"AGENTS.md was cut to 32 KiB"} },
	}, func(st store.Store) store.Store { return warningFails{st} })
	f.srv.Enqueue(llmtest.Text("done"))
	s := f.session()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}, nil); err != nil {
		t.Fatalf("the turn failed over a warning: %v", err)
	}
	if got := logs.String(); !strings.Contains(got, "store event") || !strings.Contains(got, "type=warning") || !strings.Contains(got, "disk full") {
		t.Errorf("log %q; want the lost warning", got)
	}
}

// The Sink contract: one call at a time even while a parallel batch
// streams output from several goroutines, stored events with their
// Sequence set and in order, and no call after Run returns.
func TestSinkContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Permissions: askPolicy(t)}, builtin.NewRunCommand())
	var calls []llmtest.ToolCall
	for _, id := range []string{"a", "b", "c"} {
		calls = append(calls, llmtest.ToolCall{ID: id, Name: "run_command",
			Arguments: `{"command":"for i in 1 2 3 4 5; do echo ` + id + `$i; sleep 0.02; done"}`})
	}
	f.srv.Enqueue(llmtest.Reply{ToolCalls: calls}, llmtest.Text("done"))
	s := f.session()
	var inside, returned atomic.Int32
	var last int64
	var outputs int
	err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, func(e protocol.Event) {
		if inside.Add(1) != 1 {
			t.Error("the sink was called while another call ran")
		}
		defer inside.Add(-1)
		if returned.Load() != 0 {
			t.Error("the sink was called after Run returned")
		}
		time.Sleep(time.Millisecond) // a slow sink widens any overlap
		switch {
		case e.Type.Stored() && e.Sequence <= last:
			t.Errorf("%s with sequence %d after %d", e.Type, e.Sequence, last)
		case e.Type.Stored():
			last = e.Sequence
		case e.Sequence != 0:
			t.Errorf("delta %s with sequence %d", e.Type, e.Sequence)
		}
		if e.Type == protocol.EventToolOutput {
			outputs++
		}
	})
	returned.Store(1)
	if err != nil {
		t.Fatal(err)
	}
	if outputs < 3 {
		t.Errorf("%d tool.output events, want the three commands' output", outputs)
	}
}
