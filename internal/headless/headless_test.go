package headless

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestPlainOutput(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	p := NewPrinter(&out, &errb, false)
	ok, bad := true, false
	for _, e := range []protocol.Event{
		{Type: protocol.EventTurnStarted},
		{Type: protocol.EventMessageDelta, Text: "Let me look"},
		{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant}},
		{Type: protocol.EventToolStarted, Summary: "Read a.go"},
		{Type: protocol.EventToolCompleted, Summary: "Read a.go", OK: &ok, Preview: "package a"},
		{Type: protocol.EventToolStarted, Summary: "Read b.go"},
		{Type: protocol.EventToolCompleted, Summary: "Read b.go", OK: &bad, Preview: "Tool failed: file not found: b.go\nmore"},
		{Type: protocol.EventRetry, Error: "provider returned 429", DelayMS: 1500, Attempt: 1},
		{Type: protocol.EventMessageDelta, Text: "Done."},
		{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant}},
		{Type: protocol.EventTurnCompleted},
	} {
		p.Handle(e)
	}
	if got, want := out.String(), "Let me look\nDone.\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	for _, want := range []string{"• Read a.go\n", "✗ Read b.go: Tool failed: file not found: b.go\n", "retrying in 1.5s (attempt 2)"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q lacks %q", errb.String(), want)
		}
	}
	if strings.Contains(errb.String(), "more") {
		t.Errorf("stderr shows more than the first line of a failure: %q", errb.String())
	}
}

func TestJSONLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := NewPrinter(&out, &bytes.Buffer{}, true)
	p.Handle(protocol.Event{Type: protocol.EventMessageDelta, SessionID: "s", Text: "<b>&"})
	p.Handle(protocol.Event{Type: protocol.EventTurnCompleted, SessionID: "s", Sequence: 7})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	if !strings.Contains(lines[0], `"text":"<b>&"`) {
		t.Errorf("HTML escaped or text lost: %s", lines[0])
	}
	var e protocol.Event
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || e.Sequence != 7 || e.Type != protocol.EventTurnCompleted {
		t.Errorf("line 2 %s: %v", lines[1], err)
	}
}

func TestPlainOutputIsSanitised(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	p := NewPrinter(&out, &errb, false)
	p.Handle(protocol.Event{Type: protocol.EventMessageDelta, Text: "copy \x1b]52;c;ZXZpbA==\x07 line\r"})
	p.Handle(protocol.Event{Type: protocol.EventMessageDelta, Text: "\nnext \u202e"})
	p.Handle(protocol.Event{Type: protocol.EventToolStarted, Summary: "Read \x1b[2Jx"})
	if strings.ContainsAny(out.String()+errb.String(), "\x1b\x07\u202e") {
		t.Errorf("control characters reached the terminal: %q %q", out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "line\r\nnext") {
		t.Errorf("a CRLF split over two deltas was mangled: %q", out.String())
	}
}

func TestSubagentEventsAreProgressOnly(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	p := NewPrinter(&out, &errb, false)
	child := func(e protocol.Event) protocol.Event {
		e.SessionID, e.ParentSessionID, e.ParentToolCallID = "c", "p", "t1"
		return e
	}
	for _, e := range []protocol.Event{
		{Type: protocol.EventToolStarted, Summary: "explore: find the parser"},
		child(protocol.Event{Type: protocol.EventMessageDelta, Text: "child text"}),
		child(protocol.Event{Type: protocol.EventToolStarted, Summary: "Search for parse"}),
		child(protocol.Event{Type: protocol.EventTurnFailed, Error: "Maximum agent iterations reached (2)"}),
		{Type: protocol.EventMessageDelta, Text: "Found it."},
	} {
		p.Handle(e)
	}
	if got := out.String(); got != "Found it." {
		t.Errorf("stdout %q: a subagent's text is not the answer", got)
	}
	for _, want := range []string{"• explore: find the parser\n", "    • Search for parse\n", "    ✗ subagent: Maximum agent iterations reached (2)\n"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr %q lacks %q", errb.String(), want)
		}
	}
}
