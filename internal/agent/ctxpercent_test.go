package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestCompactionReportsContextLeft: a /compact's event carries the
// context use the compaction left, below what the last request used.
func TestCompactionReportsContextLeft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Catalog: func(string) catalog.Model { return catalog.Model{ContextWindow: 60000} }})
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("short summary")
		}
		return llmtest.Text(strings.Repeat("a long answer ", 400))
	})
	s := f.session()
	ctx := context.Background()
	var rec recorder
	for _, q := range []string{"first " + strings.Repeat("word ", 2000), "second question"} {
		if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: q}, rec.sink); err != nil {
			t.Fatal(err)
		}
	}
	usage := rec.of(protocol.EventUsage)
	before := usage[len(usage)-1].ContextPercent
	if err := f.core.Compact(ctx, s.ID, "", rec.sink); err != nil {
		t.Fatal(err)
	}
	evs := rec.of(protocol.EventCompaction)
	if len(evs) != 1 {
		t.Fatalf("%d compaction events", len(evs))
	}
	if after := evs[0].ContextPercent; after <= 0 || after >= before {
		t.Errorf("context after the compaction %.1f%%, before %.1f%%; want less, and known", after, before)
	}
}
