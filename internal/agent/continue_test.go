package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
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
