package agent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
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
