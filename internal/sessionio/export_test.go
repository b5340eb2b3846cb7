package sessionio

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := NewRedactor("hunter2-configured-key", "abc")
	for in, want := range map[string]string{
		"key hunter2-configured-key here":                                      "key [redacted] here",
		"abc is short and stays":                                               "abc is short and stays",
		"export OPENAI_API_KEY=sk-proj-0123456789abcdefXYZ":                    "export OPENAI_API_KEY=[redacted]",
		"token ghp_0123456789abcdefghijklmnopqrstuvwxyz":                       "token [redacted]",
		"Authorization: Bearer abcdefghijklmnop.qrstu":                         "Authorization: Bearer [redacted]",
		`{"password": "correct horse battery"}`:                                `{"password": "[redacted]"}`,
		"AWS AKIAABCDEFGHIJKLMNOP done":                                        "AWS [redacted] done",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----": "[redacted]",
		"plain text, no secrets; tokens are words":                             "plain text, no secrets; tokens are words",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// exportFixture is a session whose transcript holds secrets.
func exportFixture() Export {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	return Export{
		Session: &protocol.Session{ID: "s1", Title: "Deploy with sk-live-0123456789abcdefgh", Workspace: "/w", Model: "p/m", CreatedAt: now, UpdatedAt: now},
		Messages: []protocol.Message{
			{Seq: 1, Role: protocol.RoleSystem, Content: "You are a coding agent."},
			{Seq: 2, Role: protocol.RoleUser, Content: "Use the key the-configured-secret-value to deploy"},
			{Seq: 3, Role: protocol.RoleAssistant, Content: "Running it.", Reasoning: "thinking", Model: "p/m",
				ToolCalls: []protocol.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command":"API_TOKEN=the-configured-secret-value ./deploy"}`}}},
			{Seq: 4, Role: protocol.RoleTool, ToolCallID: "c1", ToolName: "run_command", Content: "deployed ``` with fences", IsError: true},
		},
		Rewinds: []protocol.Rewind{{ToSeq: 2, FromSeq: 4, CreatedAt: now}},
		Events: []protocol.Event{{Type: protocol.EventToolStarted, SessionID: "s1", Sequence: 1,
			Arguments: json.RawMessage(`{"command":"echo the-configured-secret-value"}`), Timestamp: now}},
	}
}

func TestExportJSONLRoundTrip(t *testing.T) {
	t.Parallel()
	e := exportFixture()
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, e, NewRedactor("the-configured-secret-value")); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"the-configured-secret-value", "sk-live-0123456789abcdefgh"} {
		if strings.Contains(out, secret) {
			t.Errorf("export holds %q:\n%s", secret, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("not JSON: %s", line)
		}
	}
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s := readOne(t, SourceMxClaw, path)
	if s.SourceID != "s1" || s.Workspace != "/w" || !strings.Contains(s.Title, Redacted) {
		t.Errorf("session = %+v", s)
	}
	var roles []protocol.Role
	for _, m := range s.Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []protocol.Role{protocol.RoleSystem, protocol.RoleUser, protocol.RoleAssistant, protocol.RoleTool}) {
		t.Errorf("roles = %v", roles)
	}
	if s.Messages[3].Content != e.Messages[3].Content || s.Messages[2].ToolCalls[0].ID != "c1" || !s.Messages[3].IsError {
		t.Errorf("messages = %+v", s.Messages)
	}
	if len(s.Notes) != 1 || s.Notes[0].What != "mx-claw export rewind" {
		t.Errorf("notes = %v", s.Notes)
	}
	// Something else is not an export.
	bad := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(bad, []byte(`{"type":"message","message":{}}`+"\n"), 0o600)
	if _, failures, _ := Read(SourceMxClaw, bad); len(failures) != 1 {
		t.Errorf("a file that is not an export was read: %v", failures)
	}
}

func TestExportMarkdown(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, exportFixture(), NewRedactor("the-configured-secret-value")); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if strings.Contains(md, "the-configured-secret-value") || strings.Contains(md, "sk-live") {
		t.Errorf("markdown holds a secret:\n%s", md)
	}
	for _, want := range []string{"# Deploy with [redacted]", "## User (#2)", "## Assistant · p/m (#3)", "**Tool call** `run_command`",
		"**Result** of `run_command` (`c1`) — error", "````text\ndeployed ``` with fences\n````"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
