package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestTakenOverTurnWritesNothing: a turn whose lease another process takes
// over while the model answers (a paused process that woke up late: its
// heartbeat has not noticed yet) stores nothing more — the store refuses
// its writes — and ends with ErrLeaseLost.
func TestTakenOverTurnWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{LeaseTTL: time.Hour})
	s := f.session()
	ctx := context.Background()
	const other = "otherhost:1:abc"
	var before int
	f.srv.OnRequest(func(*llmtest.Request) {
		evs, _ := f.st.Events(ctx, s.ID, 0, 0)
		before = len(evs)
		if err := f.st.ReleaseLease(ctx, s.ID, f.core.Owner()); err != nil {
			t.Error(err)
		}
		if _, err := f.st.AcquireLease(ctx, s.ID, other, time.Minute); err != nil {
			t.Error(err)
		}
	})
	f.srv.Enqueue(llmtest.Text("an answer written too late"))
	err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "hi"}, nil)
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Run = %v, want ErrLeaseLost", err)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	for _, m := range msgs {
		if m.Role == protocol.RoleAssistant {
			t.Errorf("the answer was stored after the takeover: %+v", m)
		}
	}
	if evs, _ := f.st.Events(ctx, s.ID, 0, 0); len(evs) != before {
		t.Errorf("%d events after the takeover, %d before: the old holder wrote", len(evs), before)
	}
	if l, err := f.st.GetLease(ctx, s.ID); err != nil || l.Owner != other {
		t.Errorf("lease %+v, %v: the new holder's lease must stay", l, err)
	}
}
