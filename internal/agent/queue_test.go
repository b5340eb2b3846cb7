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
)

// recorder collects the events of a turn; safe for the turn's goroutine
// and the test's.
type recorder struct {
	mu  sync.Mutex
	evs []protocol.Event
}

func (r *recorder) sink(e protocol.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) of(typ protocol.EventType) []protocol.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []protocol.Event
	for _, e := range r.evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// requestText joins the contents of a chat request's messages.
func requestText(req llmtest.Request) string {
	var b strings.Builder
	for _, m := range req.Chat.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// TestQueuedGivenBackWhenTurnCancelled queues a message during a turn
// and cancels it: the message leaves the queue and comes back in
// input.returned, and the next turn sends only its own message.
func TestQueuedGivenBackWhenTurnCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Reply{Text: "never ends", Hang: true}, llmtest.Text("fresh answer"))
	s := f.session()
	ctx, cancel := context.WithCancel(context.Background())
	var rec recorder
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "first"}, rec.sink) }()
	for len(f.srv.ChatRequests()) == 0 {
		waitABit()
	}
	q, err := f.core.Enqueue(context.Background(), s.ID, "queued while busy", nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want cancelled", err)
	}
	ret := rec.of(protocol.EventInputReturned)
	if len(ret) != 1 || len(ret[0].Queued) != 1 || ret[0].Queued[0].ID != q.ID || ret[0].Queued[0].Content != "queued while busy" {
		t.Fatalf("input.returned = %+v, want the queued message", ret)
	}
	if list, _ := f.st.QueuedInputs(context.Background(), s.ID); len(list) != 0 {
		t.Errorf("still queued after the cancel: %+v", list)
	}
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "second"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 2 || strings.Contains(requestText(reqs[1]), "queued while busy") {
		t.Errorf("%d requests; the queued message was sent after the cancel", len(reqs))
	}
}

// TestLeftoverQueuedNotSentByLaterTurn leaves a message queued as a
// process that died would, then runs a turn (as another process's `run
// --continue`): the leftover is given back, never sent.
func TestLeftoverQueuedNotSentByLaterTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Text("answer"), llmtest.Text("must not be asked for"))
	s := f.session()
	ctx := context.Background()
	if _, err := f.st.EnqueueInput(ctx, s.ID, "left by a dead process"); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "new prompt"}, rec.sink); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 1 || strings.Contains(requestText(reqs[0]), "left by a dead process") {
		t.Errorf("%d requests: the leftover was sent", len(reqs))
	}
	if ret := rec.of(protocol.EventInputReturned); len(ret) != 1 || ret[0].Queued[0].Content != "left by a dead process" {
		t.Errorf("input.returned = %+v", ret)
	}
}

// TestQueuedEditAndRemove edits and removes messages queued during a
// turn: the turn then sends the edited one only.
func TestQueuedEditAndRemove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	release := make(chan struct{})
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(f.srv.ChatRequests()) == 1 {
			<-release
		}
		return llmtest.Text("ok")
	})
	s := f.session()
	ctx := context.Background()
	var rec recorder
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "first"}, rec.sink) }()
	for len(f.srv.ChatRequests()) == 0 {
		waitABit()
	}
	a, _ := f.core.Enqueue(ctx, s.ID, "keep me", nil)
	b, _ := f.core.Enqueue(ctx, s.ID, "drop me", nil)
	if _, err := f.core.EditQueued(ctx, s.ID, a.ID, "keep me, edited", rec.sink); err != nil {
		t.Fatal(err)
	}
	if q, err := f.core.RemoveQueued(ctx, s.ID, b.ID, rec.sink); err != nil || q.Content != "drop me" {
		t.Fatalf("RemoveQueued = %+v, %v", q, err)
	}
	list, err := f.core.QueuedInputs(ctx, s.ID)
	if err != nil || len(list) != 1 || list[0].Content != "keep me, edited" {
		t.Fatalf("QueuedInputs = %+v, %v", list, err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	last := requestText(reqs[1])
	if !strings.Contains(last, "keep me, edited") || strings.Contains(last, "drop me") {
		t.Errorf("the queued turn sent:\n%s", last)
	}
	if len(rec.of(protocol.EventInputEdited)) != 1 || len(rec.of(protocol.EventInputRemoved)) != 1 {
		t.Errorf("events: edited %d, removed %d; want 1 each", len(rec.of(protocol.EventInputEdited)), len(rec.of(protocol.EventInputRemoved)))
	}
}

// waitABit pauses a polling loop.
func waitABit() { time.Sleep(5 * time.Millisecond) }
