package agent

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// queueHook is a store that runs before(b) ahead of every AppendBatch; an
// error from it is returned instead of storing the batch.
type queueHook struct {
	store.Store
	mu     sync.Mutex
	before func(inner store.Store, b store.Batch) error
}

func (q *queueHook) AppendBatch(ctx context.Context, id string, b store.Batch) error {
	q.mu.Lock()
	before := q.before
	q.mu.Unlock()
	if before != nil {
		if err := before(q.Store, b); err != nil {
			return err
		}
	}
	return q.Store.AppendBatch(ctx, id, b)
}

// userText returns the content of the batch's user message, if it has one.
func userText(b store.Batch) (string, bool) {
	for _, m := range b.Messages {
		if m.Role == protocol.RoleUser {
			return m.Content, true
		}
	}
	return "", false
}

// userMessages returns the session's stored user messages.
func userMessages(t *testing.T, st store.Store, id string) []string {
	t.Helper()
	msgs, err := st.Messages(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.Role == protocol.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestQueuedMessageKeptUntilStored: a message queued during a turn stays
// queued until the next turn stores it. The process "dies" (its store
// write fails for good) after the turn took up the message and before it
// was stored: the message is still queued, and the next process's turn
// sends it, once.
func TestQueuedMessageKeptUntilStored(t *testing.T) {
	t.Parallel()
	errDied := errors.New("the process died here")
	hook := &queueHook{}
	f := newWrappedFixture(t, Options{}, func(st store.Store) store.Store { hook.Store = st; return hook })
	s := f.session()
	died := false
	hook.before = func(inner store.Store, b store.Batch) error {
		if died {
			return errDied // a dead process writes nothing more
		}
		switch text, _ := userText(b); text {
		case "first":
			// The user queues a message while the first turn runs.
			if _, err := inner.EnqueueInput(context.Background(), s.ID, "queued"); err != nil {
				return err
			}
		case "queued":
			died = true
			return errDied
		}
		return nil
	}
	f.srv.Enqueue(llmtest.Text("a1"), llmtest.Text("a2"))
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "first"}, nil); !errors.Is(err, errDied) {
		t.Fatalf("Run = %v, want the turn of the queued message to die storing it", err)
	}
	list, err := f.st.QueuedInputs(context.Background(), s.ID)
	if err != nil || len(list) != 1 || list[0].Content != "queued" {
		t.Fatalf("queue after the death = %+v, %v; want the message still queued", list, err)
	}

	hook.mu.Lock()
	hook.before = nil
	hook.mu.Unlock()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, SendQueued: true}, nil); err != nil {
		t.Fatal(err)
	}
	if got := userMessages(t, f.st, s.ID); len(got) != 2 || got[1] != "queued" {
		t.Fatalf("user messages = %q, want [first queued]", got)
	}
	if list, _ := f.st.QueuedInputs(context.Background(), s.ID); len(list) != 0 {
		t.Errorf("still queued after it was sent: %+v", list)
	}
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, SendQueued: true}, nil); err != nil {
		t.Fatalf("Run with nothing queued = %v, want nil", err)
	}
	if n := len(f.srv.ChatRequests()); n != 2 {
		t.Errorf("%d model requests, want 2: nothing is sent twice", n)
	}
}

// TestQueuedMessageChangedWhileSent: the user removes or edits a queued
// message after the turn read the queue and before it stored the
// message: the turn's store is refused, it reads the queue again, and
// sends what is queued then — the removed message never, the edited one
// with its new text, each once.
func TestQueuedMessageChangedWhileSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(st store.Store, sessionID string, q protocol.QueuedInput) error
		want   string
	}{
		{"removed", func(st store.Store, id string, q protocol.QueuedInput) error {
			_, err := st.RemoveInput(context.Background(), id, q.ID)
			return err
		}, "second"},
		{"edited", func(st store.Store, id string, q protocol.QueuedInput) error {
			_, err := st.EditInput(context.Background(), id, q.ID, "first, edited")
			return err
		}, "first, edited\n\nsecond"},
		{"all removed", func(st store.Store, id string, q protocol.QueuedInput) error {
			_, err := st.TakeInputs(context.Background(), id)
			return err
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hook := &queueHook{}
			f := newWrappedFixture(t, Options{}, func(st store.Store) store.Store { hook.Store = st; return hook })
			s := f.session()
			ctx := context.Background()
			first, _ := f.st.EnqueueInput(ctx, s.ID, "first")
			if _, err := f.st.EnqueueInput(ctx, s.ID, "second"); err != nil {
				t.Fatal(err)
			}
			changed := false
			hook.before = func(inner store.Store, b store.Batch) error {
				if len(b.Dequeue) > 0 && !changed {
					changed = true
					return tc.change(inner, s.ID, first)
				}
				return nil
			}
			f.srv.Enqueue(llmtest.Text("answer"))
			if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, SendQueued: true}, nil); err != nil {
				t.Fatal(err)
			}
			got := userMessages(t, f.st, s.ID)
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("user messages = %q, want none: everything was removed", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Fatalf("user messages = %q, want [%q]", got, tc.want)
			}
			if list, _ := f.st.QueuedInputs(ctx, s.ID); len(list) != 0 {
				t.Errorf("still queued: %+v", list)
			}
			if tc.want == "" {
				if st := f.status(s.ID); st != protocol.StatusIdle {
					t.Errorf("status after a turn with nothing to send = %s, want idle", st)
				}
			}
		})
	}
}
