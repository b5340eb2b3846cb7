package store

import (
	"context"
	"errors"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestDeleteSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	for _, id := range []string{"gone", "kept"} {
		if err := s.CreateSession(ctx, &protocol.Session{ID: id, Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessage(ctx, id, &protocol.Message{Role: protocol.RoleUser, Content: "hi"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: id}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a-" + id, SessionID: id, Call: protocol.ToolCall{ID: "c", Name: "x"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnqueueInput(ctx, id, "later"); err != nil {
			t.Fatal(err)
		}
		if err := s.AddGrant(ctx, "session:"+id, "run_command(go test:*)"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddGrant(ctx, "/w", "run_command(make:*)"); err != nil {
		t.Fatal(err)
	}

	// A turn runs on it: refused, nothing removed.
	runner, remover := NewOwner(), NewOwner()
	if _, err := s.AcquireLease(ctx, "gone", runner, 0); err != nil {
		t.Fatal(err)
	}
	var busy *LeaseHeldError
	if err := s.DeleteSession(ctx, "gone", remover); !errors.As(err, &busy) || busy.Owner != runner {
		t.Fatalf("delete a session a turn runs on: %v, want *LeaseHeldError naming %s", err, runner)
	}
	if _, err := s.GetSession(ctx, "gone"); err != nil {
		t.Fatalf("a refused delete removed the session: %v", err)
	}
	if err := s.ReleaseLease(ctx, "gone", runner); err != nil {
		t.Fatal(err)
	}

	if err := s.DeleteSession(ctx, "gone", remover); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get a deleted session: %v", err)
	}
	if err := s.DeleteSession(ctx, "gone", remover); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete it again: %v, want ErrNotFound", err)
	}
	if msgs, _ := s.Messages(ctx, "gone", 0); len(msgs) != 0 {
		t.Errorf("messages left: %v", msgs)
	}
	if evs, _ := s.Events(ctx, "gone", 0, 0); len(evs) != 0 {
		t.Errorf("events left: %v", evs)
	}
	if q, _ := s.QueuedInputs(ctx, "gone"); len(q) != 0 {
		t.Errorf("queued input left: %v", q)
	}
	if g, _ := s.Grants(ctx, "session:gone"); len(g) != 0 {
		t.Errorf("session grants left: %v", g)
	}
	// The other session and the project's grants are untouched.
	if msgs, _ := s.Messages(ctx, "kept", 0); len(msgs) != 1 {
		t.Errorf("the other session's messages: %v", msgs)
	}
	if a, _ := s.PendingApprovals(ctx, "kept"); len(a) != 1 {
		t.Errorf("the other session's approvals: %v", a)
	}
	if g, _ := s.Grants(ctx, "session:kept", "/w"); len(g) != 2 {
		t.Errorf("other grants: %v", g)
	}
}
