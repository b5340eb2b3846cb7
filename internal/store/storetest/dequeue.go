package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testDequeueWithMessage sends queued inputs as a turn's user message: they
// leave the queue in the batch that stores the message, never before, and
// a batch whose inputs were removed or edited since they were read stores
// nothing, so a message is neither lost, sent twice nor resurrected.
func testDequeueWithMessage(t *testing.T, be Backend) {
	ctx := context.Background()
	s := be.Open(t, Options{})
	NewSession(t, s, "s")
	NewSession(t, s, "other")
	a, _ := s.EnqueueInput(ctx, "s", "first")
	b, _ := s.EnqueueInput(ctx, "s", "second")
	o, _ := s.EnqueueInput(ctx, "other", "elsewhere")
	send := func(list ...protocol.QueuedInput) error {
		msg := &protocol.Message{Role: protocol.RoleUser, Content: "sent"}
		ev := &protocol.Event{Type: protocol.EventMessageCompleted, SessionID: "s", Message: msg}
		return s.AppendBatch(ctx, "s", store.Batch{Messages: []*protocol.Message{msg}, Events: []*protocol.Event{ev}, Dequeue: list})
	}
	count := func() int {
		msgs, err := s.Messages(ctx, "s", 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs)
	}
	ids, err := s.QueuedSessions(ctx)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"other", "s"}) {
		t.Fatalf("QueuedSessions = %v, %v", ids, err)
	}

	// Queued, read, then edited by the user: the read text is not sent.
	if _, err := s.EditInput(ctx, "s", a.ID, "first, edited"); err != nil {
		t.Fatal(err)
	}
	if err := send(a, b); !errors.Is(err, store.ErrQueueChanged) {
		t.Fatalf("batch sending an edited input = %v, want ErrQueueChanged", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("a refused batch stored %d message(s)", n)
	}
	// Removed by the user: not sent, and the other stays queued.
	if _, err := s.RemoveInput(ctx, "s", b.ID); err != nil {
		t.Fatal(err)
	}
	list, _ := s.QueuedInputs(ctx, "s")
	if err := send(append(list, b)...); !errors.Is(err, store.ErrQueueChanged) {
		t.Fatalf("batch sending a removed input = %v, want ErrQueueChanged", err)
	}
	// Another session's input is not this session's to send.
	if err := send(o); !errors.Is(err, store.ErrQueueChanged) {
		t.Fatalf("batch sending another session's input = %v, want ErrQueueChanged", err)
	}
	if got, _ := s.QueuedInputs(ctx, "s"); len(got) != 1 || got[0].Content != "first, edited" {
		t.Fatalf("queue after refused batches = %+v", got)
	}
	// Read again and sent: stored and dequeued together, once.
	list, _ = s.QueuedInputs(ctx, "s")
	if err := send(list...); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("messages after sending = %d, want 1", n)
	}
	if got, _ := s.QueuedInputs(ctx, "s"); len(got) != 0 {
		t.Fatalf("queue after sending = %+v", got)
	}
	if err := send(list...); !errors.Is(err, store.ErrQueueChanged) {
		t.Fatalf("sending an input twice = %v, want ErrQueueChanged", err)
	}
	if _, err := s.EditInput(ctx, "s", a.ID, "too late"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("editing a sent input = %v, want ErrNotFound", err)
	}
	if _, err := s.RemoveInput(ctx, "s", a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("removing a sent input = %v, want ErrNotFound", err)
	}
	if ids, _ := s.QueuedSessions(ctx); !slices.Equal(ids, []string{"other"}) {
		t.Errorf("QueuedSessions after sending = %v, want [other]", ids)
	}
}

// testDequeueRace races a turn sending each queued input against the user
// removing or editing it: for every input exactly one side wins. A sent
// input is stored once with the text it was sent with; a removed one is
// neither stored nor queued; an edit either lands before the send (which
// then fails and must read again) or finds the input gone.
func testDequeueRace(t *testing.T, be Backend) {
	ctx := context.Background()
	s := be.Open(t, Options{})
	NewSession(t, s, "s")
	const n = 20
	for i := range n {
		q, err := s.EnqueueInput(ctx, "s", "m")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var sendErr, userErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			msg := &protocol.Message{Role: protocol.RoleUser, Content: q.Content}
			sendErr = s.AppendBatch(ctx, "s", store.Batch{Messages: []*protocol.Message{msg}, Dequeue: []protocol.QueuedInput{q}})
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, userErr = s.RemoveInput(ctx, "s", q.ID)
			} else {
				_, userErr = s.EditInput(ctx, "s", q.ID, "edited")
			}
		}()
		wg.Wait()
		if sendErr != nil && !errors.Is(sendErr, store.ErrQueueChanged) {
			t.Fatalf("send: %v", sendErr)
		}
		if userErr != nil && !errors.Is(userErr, store.ErrNotFound) {
			t.Fatalf("remove/edit: %v", userErr)
		}
		if (sendErr == nil) == (userErr == nil) {
			t.Fatalf("round %d: send err %v, user err %v: exactly one must win", i, sendErr, userErr)
		}
		left, _ := s.QueuedInputs(ctx, "s")
		switch {
		case sendErr == nil && len(left) != 0:
			t.Fatalf("round %d: sent input still queued: %+v", i, left)
		case sendErr != nil && i%2 == 0 && len(left) != 0:
			t.Fatalf("round %d: removed input still queued: %+v", i, left)
		case sendErr != nil && i%2 == 1 && (len(left) != 1 || left[0].Content != "edited"):
			t.Fatalf("round %d: edited input = %+v", i, left)
		}
		// What the edit left is sent before the next round.
		if len(left) > 0 {
			msg := &protocol.Message{Role: protocol.RoleUser, Content: left[0].Content}
			if err := s.AppendBatch(ctx, "s", store.Batch{Messages: []*protocol.Message{msg}, Dequeue: left}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
