package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testFileChangesRoundTrip: the file changes of a call are stored with its
// result and read back in order, a revert is stored with what reports it,
// and the checkpoint objects of the workspace are those the changes name.
func testFileChangesRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	res := &protocol.Message{Role: protocol.RoleTool, Content: "ok", ToolCallID: "c1", TurnID: "t1"}
	change := protocol.FileChange{Path: "a/b.txt",
		Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "1111", Size: 3},
		After:  protocol.FileState{Mode: protocol.ModeRegular | 0o755, OID: "2222", Size: 4}}
	gone := protocol.FileChange{Path: "c.txt", Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "3333"}}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: []*protocol.Message{
		{Role: protocol.RoleUser, Content: "go"}, res,
	}, Changes: []store.CallChanges{{Result: res, Changes: []protocol.FileChange{change, gone}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Changes(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("changes = %+v", got)
	}
	if g := got[0]; g.FileChange != change || g.MessageSeq != res.Seq || g.TurnID != "t1" || g.ToolCallID != "c1" ||
		g.Reverted || g.SessionID != "s1" || g.CreatedAt.IsZero() {
		t.Errorf("change = %+v", g)
	}
	if got[1].Kind() != protocol.ChangeDeleted || got[0].Kind() != protocol.ChangeModified {
		t.Errorf("kinds = %s, %s", got[1].Kind(), got[0].Kind())
	}
	if later, _ := s.Changes(ctx, "s1", res.Seq); len(later) != 0 {
		t.Errorf("changes after %d = %+v", res.Seq, later)
	}
	// A revert is stored with what reports it.
	note := &protocol.Message{Role: protocol.RoleSystem, Content: "undone"}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: []*protocol.Message{note}, Reverted: []int64{got[0].ID}}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Changes(ctx, "s1", 0)
	if !got[0].Reverted || got[1].Reverted {
		t.Errorf("after revert: %+v", got)
	}
	objs, err := s.CheckpointObjects(ctx, "/w")
	if err != nil || len(objs) != 3 || !objs["1111"] || !objs["3333"] {
		t.Errorf("objects = %v, %v", objs, err)
	}
	if objs, err := s.CheckpointObjects(ctx, "/elsewhere"); err != nil || len(objs) != 0 {
		t.Errorf("objects of another workspace = %v, %v", objs, err)
	}
	// Changes need a stored result.
	err = s.AppendBatch(ctx, "s1", store.Batch{Changes: []store.CallChanges{{Result: &protocol.Message{}, Changes: []protocol.FileChange{change}}}})
	if err == nil {
		t.Error("changes without a result were stored")
	}
	if got, _ = s.Changes(ctx, "s1", 0); len(got) != 2 {
		t.Errorf("after the refused batch: %+v", got)
	}
}

// testRewinds: a rewind is stored and read back; one of a missing session
// is ErrNotFound.
func testRewinds(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	if err := s.AppendBatch(ctx, "s1", store.Batch{Rewind: &protocol.Rewind{ToSeq: 4, FromSeq: 9}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Rewinds(ctx, "s1")
	if err != nil || len(got) != 1 || got[0].ToSeq != 4 || got[0].FromSeq != 9 || got[0].CreatedAt.IsZero() {
		t.Fatalf("rewinds = %+v, %v", got, err)
	}
	if err := s.AppendBatch(ctx, "nope", store.Batch{Rewind: &protocol.Rewind{ToSeq: 1, FromSeq: 2}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rewind of a missing session: %v", err)
	}
}

// testDeleteSession: deleting a session removes everything stored with it
// but the audit, is refused while a live owner holds its lease, and
// leaves other sessions alone.
func testDeleteSession(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now, ProcessAlive: func(int) bool { return true }})
	NewSession(t, s, "s1")
	NewSession(t, s, "keep")
	res := &protocol.Message{Role: protocol.RoleTool, Content: "deleted words", ToolCallID: "c"}
	if err := s.AppendBatch(ctx, "s1", store.Batch{
		Messages:   []*protocol.Message{{Role: protocol.RoleUser, Content: "doomed words"}, res},
		Events:     []*protocol.Event{{Type: protocol.EventTurnStarted, SessionID: "s1"}, {Type: protocol.EventTurnStarted, SessionID: "s1"}},
		Audit:      []*protocol.AuditEntry{{SessionID: "s1", Tool: "x", Decision: "allow"}},
		Files:      []protocol.FileVersion{{Path: "/w/a", SHA256: "x"}},
		Compaction: &protocol.Compaction{ID: "c1", UpToSeq: 1, Summary: "s"},
		Changes:    []store.CallChanges{{Result: res, Changes: []protocol.FileChange{{Path: "a", After: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "9"}}}}},
		Rewind:     &protocol.Rewind{ToSeq: 1, FromSeq: 2},
		Source:     &store.SessionSource{Source: "claude", SourceID: "abc"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGrant(ctx, "session:s1", "run_command(ls)"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "ap", SessionID: "s1", Call: protocol.ToolCall{ID: "c", Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnqueueInput(ctx, "s1", "later"); err != nil {
		t.Fatal(err)
	}
	// A damaged event, set aside by the read that meets it.
	b.Exec(t, s, `UPDATE events SET payload = 'not json' WHERE session_id = 's1' AND sequence = 1`)
	if _, err := s.Events(ctx, "s1", 0, 0); err != nil {
		t.Fatal(err)
	}
	if q, err := s.Quarantined(ctx, "s1", true); err != nil || len(q) != 1 {
		t.Fatalf("quarantined = %+v, %v", q, err)
	}
	if id, err := s.ImportedSession(ctx, "claude", "abc"); err != nil || id != "s1" {
		t.Fatalf("imported = %q, %v", id, err)
	}
	if _, err := s.ImportedSession(ctx, "claude", "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("imported of an unknown source id: %v", err)
	}
	// In use: a live owner holds its lease.
	if _, err := s.AcquireLease(ctx, "s1", store.NewOwner(), time.Minute); err != nil {
		t.Fatal(err)
	}
	var held *store.LeaseHeldError
	if err := s.DeleteSession(ctx, "s1"); !errors.As(err, &held) {
		t.Fatalf("delete of a session in use: %v", err)
	}
	clock.Add(2 * time.Minute) // the lease expired
	if err := s.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("session still there: %v", err)
	}
	for table, where := range map[string]string{
		"messages": "session_id = 's1'", "events": "session_id = 's1'", "approvals": "session_id = 's1'",
		"queued_inputs": "session_id = 's1'", "file_versions": "session_id = 's1'",
		"file_changes": "session_id = 's1'", "rewinds": "session_id = 's1'", "compactions": "session_id = 's1'",
		"session_sources": "session_id = 's1'", "leases": "session_id = 's1'",
		"permission_grants": "scope = 'session:s1'", "quarantine": "session_id = 's1'",
	} {
		if n := b.QueryString(t, s, "SELECT count(*) FROM "+table+" WHERE "+where); n != "0" {
			t.Errorf("%s: %s rows left", table, n)
		}
	}
	if n := b.QueryString(t, s, `SELECT count(*) FROM permission_audit WHERE session_id = 's1'`); n != "1" {
		t.Errorf("audit: %s rows, want the 1 kept", n)
	}
	if hits, _ := s.Search(ctx, store.SearchQuery{Text: "doomed"}); len(hits) != 0 {
		t.Errorf("search still finds %v", hits)
	}
	if _, err := s.ImportedSession(ctx, "claude", "abc"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("imported after delete: %v", err)
	}
	if _, err := s.GetSession(ctx, "keep"); err != nil {
		t.Error(err)
	}
	if err := s.DeleteSession(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	// The id can be used again, from scratch.
	NewSession(t, s, "s1")
	if msgs, err := s.Messages(ctx, "s1", 0); err != nil || len(msgs) != 0 {
		t.Errorf("messages of the new s1 = %+v, %v", msgs, err)
	}
}
