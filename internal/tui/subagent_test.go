package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestSubagentProgressNestedUnderItsTaskCard(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("look around")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "t1", ToolName: "task", Summary: "explore: find the parser"})
	child := func(e protocol.Event) {
		e.SessionID, e.ParentSessionID, e.ParentToolCallID = "c1", "5e55101d00000001", "t1"
		h.event(e)
	}
	child(protocol.Event{Type: protocol.EventSessionCreated, Session: &protocol.Session{ID: "c1", Agent: "explore"}})
	child(protocol.Event{Type: protocol.EventTurnStarted})
	child(protocol.Event{Type: protocol.EventUsage, Usage: usage(5000, 10)})
	child(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "x1", Summary: "Search for parse"})
	child(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "x1", Summary: "Search for parse", OK: ok(true)})
	child(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "x2", Summary: "Read parser.go"})
	screen := h.screen()
	if !strings.Contains(screen, "explore: find the parser") || !strings.Contains(screen, "↳ ✓ Search for parse") ||
		!strings.Contains(screen, "↳ • Read parser.go") {
		t.Fatalf("no nested progress:\n%s", screen)
	}
	// The subagent's usage is not the turn's, and its answer is not
	// printed as the parent's.
	child(protocol.Event{Type: protocol.EventMessageDelta, Text: "It is in parser.go"})
	child(protocol.Event{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "It is in parser.go"}})
	if h.m.turnUsage.InputTokens != 0 {
		t.Errorf("the subagent's tokens were counted as the turn's: %+v", h.m.turnUsage)
	}
	for _, p := range h.printed {
		if strings.Contains(p, "It is in parser.go") {
			t.Errorf("the subagent's answer was printed: %q", p)
		}
	}
	// Its approvals are the user's to answer, as usual.
	child(protocol.Event{Type: protocol.EventPermissionRequested, RequestID: "r9", ToolName: "run_command",
		Summary: "Run ls", Arguments: json.RawMessage(`{"command":"ls"}`)})
	h.key("y")
	h.b.mu.Lock()
	answers := h.b.answers
	h.b.mu.Unlock()
	if len(answers) != 1 || answers[0].SessionID != "c1" || answers[0].RequestID != "r9" {
		t.Errorf("answers %+v: the subagent's session must be answered", answers)
	}
	// The card's end takes its nested lines with it.
	h.event(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "t1", ToolName: "task", Summary: "explore: find the parser", OK: ok(true)})
	if strings.Contains(h.screen(), "↳") {
		t.Errorf("nested lines left:\n%s", h.screen())
	}
}
