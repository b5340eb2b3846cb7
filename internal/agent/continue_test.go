package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// TestDuplicateOnlyStepsNotCounted: steps whose every call is a rejected
// duplicate do not use up the iteration budget.
func TestDuplicateOnlyStepsNotCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	same := llmtest.Call("list_dir", `{}`)
	f.srv.Enqueue(same, same, same, llmtest.Text("done"))
	s := f.session()
	err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go", MaxIterations: 3}, nil)
	if err != nil {
		t.Fatalf("Run = %v; two duplicate-only steps must not count against 3", err)
	}
}

// TestDefaultMaxIterationsIsHundreds: a real task takes more than a
// handful of steps.
func TestDefaultMaxIterationsIsHundreds(t *testing.T) {
	if DefaultMaxIterations < 200 {
		t.Errorf("DefaultMaxIterations = %d, want a few hundred", DefaultMaxIterations)
	}
}

// TestContinueAfterMaxIterations stops a turn at its step budget and
// continues it: the next turn sends the transcript as it is, with no new
// user message, and the model finishes.
func TestContinueAfterMaxIterations(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Call("list_dir", `{}`), llmtest.Call("glob", `{"pattern":"*"}`), llmtest.Text("finished"))
	s := f.session()
	ctx := context.Background()
	var rec recorder
	err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "go", MaxIterations: 2}, rec.sink)
	var mi *MaxIterationsError
	if !errors.As(err, &mi) {
		t.Fatalf("Run = %v, want MaxIterationsError", err)
	}
	if evs := rec.of(protocol.EventTurnFailed); len(evs) != 1 || evs[0].Code != protocol.CodeMaxIterations {
		t.Errorf("turn.failed = %+v, want code max_iterations", evs)
	}
	if err := f.core.Continue(ctx, ContinueRequest{SessionID: s.ID}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	users := 0
	for _, m := range reqs[2].Chat.Messages {
		if m.Role == "user" {
			users++
		}
	}
	if users != 1 {
		t.Errorf("the continued request has %d user messages, want the one", users)
	}
	if err := f.core.Continue(ctx, ContinueRequest{SessionID: s.ID}, nil); !errors.Is(err, ErrNothingToContinue) {
		t.Errorf("Continue after the answer = %v, want ErrNothingToContinue", err)
	}
}

// TestRetryAfterFailureDoesNotDuplicatePrompt fails a turn at the
// provider and retries it with Continue: the prompt is stored once and
// sent once in the retried request.
func TestRetryAfterFailureDoesNotDuplicatePrompt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Reply{Status: 500, Text: "down"}, llmtest.Text("back up"))
	s := f.session()
	ctx := context.Background()
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "the only prompt"}, nil); err == nil {
		t.Fatal("the turn did not fail")
	}
	if err := f.core.Continue(ctx, ContinueRequest{SessionID: s.ID}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	n := 0
	for _, m := range msgs {
		if m.Role == protocol.RoleUser && m.Content == "the only prompt" {
			n++
		}
	}
	reqs := f.srv.ChatRequests()
	if n != 1 || strings.Count(requestText(reqs[len(reqs)-1]), "the only prompt") != 1 {
		t.Errorf("prompt stored %d times; last request:\n%s", n, requestText(reqs[len(reqs)-1]))
	}
}

// leaseHook is a store that runs before ahead of AcquireLease, once.
type leaseHook struct {
	store.Store
	once   sync.Once
	before func(inner store.Store)
}

func (l *leaseHook) AcquireLease(ctx context.Context, id, owner string, ttl time.Duration) (protocol.Lease, error) {
	l.once.Do(func() { l.before(l.Store) })
	return l.Store.AcquireLease(ctx, id, owner, ttl)
}

// TestContinueAnsweredMeanwhileDoesNothing: Continue finds the transcript
// waiting for an answer, but by the time it holds the lease another
// process has answered it (a worker resuming a dead worker's turn waited
// for the lease while another worker sent the queue; the e2e stored that
// answer twice). Continue looks again under the lease: nothing to go on
// with, no model request, nothing recorded.
func TestContinueAnsweredMeanwhileDoesNothing(t *testing.T) {
	t.Parallel()
	hook := &leaseHook{}
	f := newWrappedFixture(t, Options{}, func(st store.Store) store.Store { hook.Store = st; return hook })
	s := f.session()
	ctx := context.Background()
	if err := f.st.AppendBatch(ctx, s.ID, store.Batch{Messages: []*protocol.Message{{Role: protocol.RoleUser, Content: "interrupted"}}}); err != nil {
		t.Fatal(err)
	}
	before, err := f.st.Events(ctx, s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	hook.before = func(inner store.Store) {
		msgs := []*protocol.Message{{Role: protocol.RoleUser, Content: "queued"}, {Role: protocol.RoleAssistant, Content: "answered elsewhere"}}
		if err := inner.AppendBatch(ctx, s.ID, store.Batch{Messages: msgs}); err != nil {
			t.Error(err)
		}
	}
	err = f.core.Continue(ctx, ContinueRequest{SessionID: s.ID, Notice: "resumed"}, nil)
	if !errors.Is(err, ErrNothingToContinue) {
		t.Errorf("Continue = %v, want ErrNothingToContinue", err)
	}
	if n := len(f.srv.ChatRequests()); n != 0 {
		t.Errorf("%d model requests, want none: the transcript was answered", n)
	}
	after, _ := f.st.Events(ctx, s.ID, 0, 0)
	if len(after) != len(before) {
		var types []protocol.EventType
		for _, e := range after[len(before):] {
			types = append(types, e.Type)
		}
		t.Errorf("events %v recorded, want none", types)
	}
	if sess, _ := f.st.GetSession(ctx, s.ID); sess.Status == protocol.StatusRunning {
		t.Errorf("session left %s", sess.Status)
	}
}
