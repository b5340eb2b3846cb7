package storetest

import (
	"context"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testCompactions: compaction records come back in the order of the
// messages they cover, with their event stored alongside.
func testCompactions(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s")
	NewSession(t, s, "other")
	for _, c := range []*protocol.Compaction{
		{ID: "c2", UpToSeq: 9, Summary: "later"},
		{ID: "c1", UpToSeq: 4, Summary: "earlier"},
	} {
		e := &protocol.Event{Type: protocol.EventCompaction, SessionID: "s"}
		if err := s.AppendBatch(ctx, "s", store.Batch{Compaction: c, Events: []*protocol.Event{e}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Compactions(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "c1" || got[1].ID != "c2" || got[1].Summary != "later" || got[0].UpToSeq != 4 {
		t.Errorf("Compactions = %+v", got)
	}
	if none, err := s.Compactions(ctx, "other"); err != nil || none == nil || len(none) != 0 {
		t.Errorf("Compactions of another session = %#v, %v; want empty", none, err)
	}
	if evs, _ := s.Events(ctx, "s", 0, 0); len(evs) != 2 {
		t.Errorf("%d events stored with the records, want 2", len(evs))
	}
	if err := s.AppendBatch(ctx, "nope", store.Batch{Compaction: &protocol.Compaction{ID: "x"}}); err == nil {
		t.Error("a compaction of a missing session was stored")
	}
}
