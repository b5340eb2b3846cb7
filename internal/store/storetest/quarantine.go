package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// TestCorruptRowsAreQuarantined: a message, an event, a compaction record
// and a pending approval whose JSON was damaged in the file do not fail
// their reads: each is moved to the quarantine with a warning event, the
// rest of the session reads as before, and a new message or event never
// takes a quarantined number.
func testCorruptRowsAreQuarantined(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	for _, text := range []string{"one", "two", "three"} {
		if _, err := s.AppendMessage(ctx, "s1", &protocol.Message{Role: protocol.RoleUser, Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Compaction: &protocol.Compaction{ID: "c1", UpToSeq: 1, Summary: "s"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a1", SessionID: "s1", Call: protocol.ToolCall{ID: "x", Name: "run_command"}}); err != nil {
		t.Fatal(err)
	}
	// Damage one row of each, as a bad disk or a hand edit would.
	for _, q := range []string{
		`UPDATE messages SET content = '{"role":"user","content":"thr' WHERE seq = 3`,
		`UPDATE events SET payload = 'not json' WHERE sequence = 2`,
		`UPDATE compactions SET record = '{' WHERE id = 'c1'`,
		`UPDATE approvals SET call = '[' WHERE id = 'a1'`,
	} {
		b.Exec(t, s, q)
	}

	msgs, err := s.Messages(ctx, "s1", 0)
	if err != nil || len(msgs) != 2 || msgs[1].Content != "two" {
		t.Fatalf("Messages = %+v, %v; want the two readable ones", msgs, err)
	}
	if cs, err := s.Compactions(ctx, "s1"); err != nil || len(cs) != 0 {
		t.Errorf("Compactions = %+v, %v", cs, err)
	}
	if ps, err := s.PendingApprovals(ctx, "s1"); err != nil || len(ps) != 0 {
		t.Errorf("PendingApprovals = %+v, %v", ps, err)
	}
	evs, err := s.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, e := range evs {
		if e.Sequence == 2 {
			t.Errorf("the damaged event was returned: %+v", e)
		}
		if e.Type == protocol.EventWarning && strings.Contains(e.Text, "doctor --repair") {
			warnings++
		}
	}
	if warnings != 3 { // the event's own warning comes after this read
		t.Errorf("%d warning events before the events were read, want 3: %+v", warnings, evs)
	}

	rows, err := s.Quarantined(ctx, "s1", false)
	if err != nil || len(rows) != 4 {
		t.Fatalf("Quarantined = %+v, %v", rows, err)
	}
	want := []string{"message 3", "compaction record c1", "pending approval a1", "event 2"}
	for i, r := range rows {
		if r.What() != want[i] || r.Error == "" || len(r.Content) == 0 {
			t.Errorf("row %d: %s %q %q, want %s", i, r.What(), r.Error, r.Content, want[i])
		}
	}
	if string(rows[0].Content) != `{"role":"user","content":"thr` {
		t.Errorf("the damaged message was not kept as it was: %q", rows[0].Content)
	}

	// Numbers are not given again: the next message is 4, not 3.
	seq, err := s.AppendMessage(ctx, "s1", &protocol.Message{Role: protocol.RoleUser, Content: "four"})
	if err != nil || seq != 4 {
		t.Errorf("next message got seq %d, %v; want 4", seq, err)
	}
	// A second read finds nothing more to set aside.
	if _, err := s.Messages(ctx, "s1", 0); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.Quarantined(ctx, "", true); len(rows) != 4 {
		t.Errorf("%d quarantined rows after a second read, want 4", len(rows))
	}
	rs, ok := s.(interface {
		ResolveQuarantined(ctx context.Context, id int64, resolved string) error
	})
	if !ok {
		t.Fatalf("%T has no ResolveQuarantined", s)
	}
	if err := rs.ResolveQuarantined(ctx, rows[0].ID, "restored"); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.Quarantined(ctx, "s1", false); len(left) != 3 {
		t.Errorf("%d unresolved rows, want 3", len(left))
	}
}
