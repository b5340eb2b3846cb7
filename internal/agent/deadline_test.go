package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestTimeBudgetCancelsRequestInFlight gives a turn 300ms against a model
// that hangs mid-answer: the request is cut at the deadline and the turn
// fails with the budget error (not as a cancellation).
func TestTimeBudgetCancelsRequestInFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Reply{Text: "never finishes", Hang: true})
	s := f.session()
	var rec recorder
	start := time.Now()
	err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go",
		Budget: Budget{MaxDuration: 300 * time.Millisecond}}, rec.sink)
	var be *BudgetError
	if !errors.As(err, &be) || be.What != "time" {
		t.Fatalf("Run = %v, want a time BudgetError", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the turn took %v with a 300ms budget", d)
	}
	if st := f.status(s.ID); st != protocol.StatusFailed {
		t.Errorf("status %s, want failed", st)
	}
	if evs := rec.of(protocol.EventTurnFailed); len(evs) != 1 || evs[0].Code != protocol.CodeBudget {
		t.Errorf("turn.failed = %+v, want code budget", evs)
	}
}

// TestFirstTokenLeavesOutApprovalWait: the first token of a turn whose
// first step waited 1.5 s for the user's approval is reported without that
// wait. (The wait is long so that a loaded machine under the race
// detector, where the first token itself took 0.8 s, cannot pass for it.)
func TestFirstTokenLeavesOutApprovalWait(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Permissions: askPolicy(t)})
	f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}},
		llmtest.Text("written"))
	s := f.session()
	evs := newEvents()
	errc := make(chan error, 1)
	go func() {
		errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "write a", OnAsk: AskWait}, evs.sink)
	}()
	req := evs.waitFor(t, protocol.EventPermissionRequested)
	time.Sleep(1500 * time.Millisecond)
	if err := f.core.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: true}, nil); err != nil {
		t.Fatal(err)
	}
	done := evs.waitFor(t, protocol.EventTurnCompleted)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if done.FirstTokenMS <= 0 || done.FirstTokenMS >= 1400 {
		t.Errorf("first token %dms; the 1500ms approval wait must not count", done.FirstTokenMS)
	}
}
