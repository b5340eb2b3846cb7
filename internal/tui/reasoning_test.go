package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// longReasoning is reasoning of n numbered lines.
func longReasoning(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "reasoning step %d\n", i)
	}
	return b.String()
}

func answerWithReasoning(h *harness, reasoning string) {
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventReasoningDelta, Text: reasoning})
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: "Done.",
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "Done.", Reasoning: reasoning}})
}

func TestCtrlOTogglesFullReasoning(t *testing.T) {
	reasoning := longReasoning(20)
	h := newHarness(t, 80, 40)
	h.typeLine("think")

	// Off: collapsed, live and printed.
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventReasoningDelta, Text: reasoning})
	live := h.screen()
	if !strings.Contains(live, "14 earlier lines of reasoning (Ctrl-O") || strings.Contains(live, "reasoning step 14\n") ||
		!strings.Contains(live, "reasoning step 20") {
		t.Fatalf("live reasoning not collapsed:\n%s", live)
	}
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: "Done.",
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "Done.", Reasoning: reasoning}})
	s := h.screen()
	if !strings.Contains(s, "reasoning step 6") || strings.Contains(s, "reasoning step 7") ||
		!strings.Contains(s, "… 14 more lines of reasoning (Ctrl-O") {
		t.Fatalf("reasoning not cut when the toggle is off:\n%s", s)
	}

	// On: in full, live and printed.
	h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	if !h.m.r.fullReasoning || !strings.Contains(h.screen(), "Reasoning shown in full") {
		t.Fatalf("Ctrl-O did not toggle:\n%s", h.screen())
	}
	h.printed = nil
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventReasoningDelta, Text: reasoning})
	if live := h.screen(); !strings.Contains(live, "reasoning step 1\n") || strings.Contains(live, "earlier lines") {
		t.Fatalf("live reasoning not in full:\n%s", live)
	}
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: "Done.",
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "Done.", Reasoning: reasoning}})
	s = h.screen()
	for i := 1; i <= 20; i++ {
		if !strings.Contains(s, fmt.Sprintf("reasoning step %d\n", i)) {
			t.Fatalf("step %d missing with the toggle on:\n%s", i, s)
		}
	}
	if strings.Contains(s, "more lines of reasoning") {
		t.Fatalf("reasoning cut with the toggle on:\n%s", s)
	}

	// Off again: cut again.
	h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	h.printed = nil
	answerWithReasoning(h, reasoning)
	if s := h.screen(); strings.Contains(s, "reasoning step 7") || !strings.Contains(s, "… 14 more lines") {
		t.Fatalf("reasoning not cut after toggling off:\n%s", s)
	}

	// /reasoning prints the last answer's reasoning in full either way.
	h.printed = nil
	h.send(turnDoneMsg{})
	h.typeLine("/reasoning")
	s = h.screen()
	for i := 1; i <= 20; i++ {
		if !strings.Contains(s, fmt.Sprintf("reasoning step %d\n", i)) {
			t.Fatalf("/reasoning lacks step %d:\n%s", i, s)
		}
	}
	h.typeLine("/help")
	if s := h.screen(); !strings.Contains(s, "Ctrl-O") || !strings.Contains(s, "/reasoning") || !strings.Contains(s, "not re-rendered") {
		t.Errorf("/help lacks Ctrl-O or /reasoning:\n%s", s)
	}
}

func TestNoReasoningYet(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("/reasoning")
	if !strings.Contains(h.screen(), "No reasoning yet.") {
		t.Errorf("screen:\n%s", h.screen())
	}
}

// TestLargePasteHasNoLag pastes 200 KB into the input: it must all land in
// the input, take no more than 50× the time of 100 key presses measured in
// the same run, and reach the Backend whole when sent.
func TestLargePasteHasNoLag(t *testing.T) {
	h := newHarness(t, 80, 24)
	line := strings.Repeat("abcdefghij", 7) + "0123456\n" // 78 bytes
	var b strings.Builder
	for b.Len() < 200<<10 {
		b.WriteString(line)
	}
	paste := strings.TrimRight(b.String(), "\n") + " end-of-paste"

	start := time.Now()
	for i := 0; i < 100; i++ {
		h.m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
		_ = h.m.View()
	}
	typing := time.Since(start)
	h.m.input.Reset()

	start = time.Now()
	h.m.Update(tea.PasteMsg{Content: paste})
	_ = h.m.View()
	pasting := time.Since(start)
	t.Logf("100 key presses: %v; 200 KB paste: %v", typing, pasting)
	if got := h.m.input.Value(); got != paste {
		t.Fatalf("input holds %d bytes, want %d", len(got), len(paste))
	}
	if pasting > 50*typing {
		t.Errorf("pasting 200 KB took %v, more than 50× 100 key presses (%v)", pasting, typing)
	}

	h.key("enter")
	var runs []string
	for deadline := time.Now().Add(2 * time.Second); len(runs) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		h.b.mu.Lock()
		runs = append([]string(nil), h.b.runs...)
		h.b.mu.Unlock()
	}
	if len(runs) != 1 || runs[0] != paste {
		n := -1
		if len(runs) == 1 {
			n = len(runs[0])
		}
		t.Fatalf("Backend got %d runs (first %d bytes), want one of %d bytes", len(runs), n, len(paste))
	}
}
