package server

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// A feed opened after a turn stored its start (the stream subscribed just
// as the turn began, before the poller ran) must not hand out the turn's
// deltas before its turn.started: the first delta of a turn the feed has
// not seen start brings the stored events before it.
func TestFeedNeverSendsDeltasBeforeTheirTurnStarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess := &protocol.Session{ID: "s1", Workspace: t.TempDir(), Status: protocol.StatusIdle}
	if err := st.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	fs := newFeeds(st, 64, slog.New(slog.NewTextHandler(io.Discard, nil)))
	// The stream has read the store up to here.
	sub, _, release := fs.subscribe("s1", 0)
	defer release()
	// The turn stores its start; its sink's publish of those events was
	// lost (no feed yet, say) — what counts is that they are stored.
	for _, typ := range []protocol.EventType{protocol.EventSessionUpdated, protocol.EventTurnStarted, protocol.EventMessageCompleted} {
		if err := st.AppendEvent(ctx, &protocol.Event{Type: typ, SessionID: "s1", TurnID: "t1", Timestamp: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	fs.publish(ctx, protocol.Event{Type: protocol.EventMessageDelta, SessionID: "s1", TurnID: "t1", Text: "a"})
	fs.publish(ctx, protocol.Event{Type: protocol.EventMessageDelta, SessionID: "s1", TurnID: "t1", Text: "b"})
	var got []protocol.EventType
	for len(got) < 5 {
		select {
		case it := <-sub.C():
			got = append(got, it.ev.Type)
		case <-time.After(5 * time.Second):
			t.Fatalf("feed gave %v, then nothing", got)
		}
	}
	want := []protocol.EventType{protocol.EventSessionUpdated, protocol.EventTurnStarted, protocol.EventMessageCompleted,
		protocol.EventMessageDelta, protocol.EventMessageDelta}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("feed gave %v, want %v", got, want)
		}
	}
}
