package store

import (
	"context"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestGrantsAuditTrust(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	for _, g := range []struct{ scope, rule string }{
		{"session:s1", "run_command(go test:*)"},
		{"/ws", "edit_file(src/main.go)"},
		{"/ws", "edit_file(src/main.go)"}, // again: kept once
		{"/other", "run_command(make:*)"},
	} {
		if err := s.AddGrant(ctx, g.scope, g.rule); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Grants(ctx, "session:s1", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Rule != "run_command(go test:*)" || got[1].Scope != "/ws" {
		t.Errorf("grants %+v", got)
	}
	if none, _ := s.Grants(ctx); len(none) != 0 {
		t.Errorf("grants of no scope: %+v", none)
	}

	for _, d := range []protocol.AuditDecision{protocol.AuditAllow, protocol.AuditDeny} {
		e := &protocol.AuditEntry{SessionID: "s1", Tool: "run_command", Summary: "Run ls", Decision: d, Source: "mode default"}
		if err := s.RecordAudit(ctx, e); err != nil || e.ID == 0 {
			t.Fatalf("RecordAudit: %v, id %d", err, e.ID)
		}
	}
	s.RecordAudit(ctx, &protocol.AuditEntry{SessionID: "s2", Tool: "read_file", Decision: "allow"})
	if a, _ := s.Audit(ctx, "s1", 0); len(a) != 2 || a[1].Decision != "deny" {
		t.Errorf("audit of s1: %+v", a)
	}
	if a, _ := s.Audit(ctx, "", 0); len(a) != 3 {
		t.Errorf("audit of all: %d entries", len(a))
	}

	if _, ok, err := s.Trusted(ctx, "/ws"); ok || err != nil {
		t.Errorf("Trusted before SetTrusted: %v, %v", ok, err)
	}
	if err := s.SetTrusted(ctx, "/ws", "old"); err != nil {
		t.Fatal(err)
	}
	s.SetTrusted(ctx, "/ws", "id-1")
	if id, ok, err := s.Trusted(ctx, "/ws"); !ok || err != nil || id != "id-1" {
		t.Errorf("Trusted after SetTrusted: %q, %v, %v", id, ok, err)
	}
}

func TestFileVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s1")
	v := protocol.FileVersion{Path: "/ws/a.go", ModTime: time.Unix(100, 5).UTC(), Size: 3, SHA256: "ab"}
	if err := s.RecordFile(ctx, "s1", v); err != nil {
		t.Fatal(err)
	}
	v.Size, v.SHA256 = 4, "cd"
	if err := s.RecordFile(ctx, "s1", v); err != nil {
		t.Fatal(err)
	}
	got, err := s.Files(ctx, "s1")
	if err != nil || len(got) != 1 || got[0] != v {
		t.Errorf("Files = %+v, %v; want [%+v]", got, err, v)
	}
	if err := s.RecordFile(ctx, "missing", v); err == nil {
		t.Error("recorded a file of a missing session")
	}
}
