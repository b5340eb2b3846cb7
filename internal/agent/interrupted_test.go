package agent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// leaveInterrupted makes the session look as a process killed mid-turn
// leaves it: status running, a turn.started without an end, its user
// message, and its lease held by a process that is gone.
func leaveInterrupted(t *testing.T, st store.Store, id string) {
	t.Helper()
	ctx := context.Background()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("cannot run true to get the pid of an ended process: %v", err)
	}
	dead := fmt.Sprintf("%s:%d:deadbeef", store.Hostname(), c.ProcessState.Pid())
	sess, err := st.GetSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sess.Status = protocol.StatusRunning
	if err := st.AppendBatch(ctx, id, store.Batch{UpdateSession: sess,
		Messages: []*protocol.Message{{Role: protocol.RoleUser, Content: "interrupted"}},
		Events:   []*protocol.Event{{Type: protocol.EventTurnStarted, SessionID: id, TurnID: "dead-turn"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireLease(ctx, id, dead, time.Hour); err != nil {
		t.Fatal(err)
	}
}

// countEvents counts the session's stored events of type typ.
func countEvents(t *testing.T, st store.Store, id string, typ protocol.EventType) int {
	t.Helper()
	evs, err := st.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestTurnAfterInterruptedTurn: a turn that takes the lease of a process
// that died mid-turn records that turn as failed before its own, so every
// turn.started has its end; with StopIfInterrupted it stops there and
// stores nothing of its own message, for the caller to resume the
// interrupted turn first.
func TestTurnAfterInterruptedTurn(t *testing.T) {
	t.Parallel()
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("stop=%v", stop), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{})
			s := f.session()
			leaveInterrupted(t, f.st, s.ID)
			f.srv.Enqueue(llmtest.Text("answer"))
			err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "next", StopIfInterrupted: stop}, nil)
			if n := countEvents(t, f.st, s.ID, protocol.EventTurnFailed); n != 1 {
				t.Errorf("%d turn.failed events, want 1: the interrupted turn's", n)
			}
			users := userMessages(t, f.st, s.ID)
			if stop {
				var ie *InterruptedTurnError
				if !errors.As(err, &ie) || ie.SessionID != s.ID {
					t.Fatalf("Run = %v, want *InterruptedTurnError", err)
				}
				if len(users) != 1 || len(f.srv.ChatRequests()) != 0 {
					t.Errorf("user messages %q, %d requests; want nothing of the new turn", users, len(f.srv.ChatRequests()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(users) != 2 || users[1] != "next" {
				t.Errorf("user messages %q, want [interrupted next]", users)
			}
			started := countEvents(t, f.st, s.ID, protocol.EventTurnStarted)
			ended := countEvents(t, f.st, s.ID, protocol.EventTurnCompleted) + countEvents(t, f.st, s.ID, protocol.EventTurnFailed)
			if started != 2 || ended != 2 {
				t.Errorf("%d turns started, %d ended; want 2 and 2", started, ended)
			}
		})
	}
}
