package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testEventNotices: a subscriber hears of the events stored by its own
// handle and by another process, with the session and its latest
// sequence, and its channel closes when its context ends.
func testEventNotices(t *testing.T, b Backend) {
	ctx := context.Background()
	first := b.Open(t, Options{})
	second := b.Another(t, first, Options{})
	n, ok := first.(store.EventNotifier)
	if !ok {
		t.Fatalf("%T is not a store.EventNotifier", first)
	}
	NewSession(t, first, "n1")
	NewSession(t, first, "n2")
	subCtx, cancel := context.WithCancel(ctx)
	ch, err := n.SubscribeEvents(subCtx)
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(id string, seq int64) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case got := <-ch:
				if got.SessionID == id && got.Sequence >= seq {
					return
				}
			case <-deadline:
				t.Fatalf("no notice of session %s up to %d", id, seq)
			}
		}
	}
	for range 3 {
		if err := second.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("n1", 3)
	if err := first.AppendBatch(ctx, "n2", store.Batch{Events: []*protocol.Event{
		{Type: protocol.EventTurnStarted, SessionID: "n2"}, {Type: protocol.EventTurnCompleted, SessionID: "n2"}}}); err != nil {
		t.Fatal(err)
	}
	waitFor("n2", 2)

	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-ch:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the channel stayed open after its context ended")
		}
	}
}
