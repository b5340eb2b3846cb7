package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// maxLiveBytes bounds how much of a streaming message the live area wraps
// per frame: only its tail is visible, so the cost per delta does not grow
// with the length of the answer (or of the session).
const maxLiveBytes = 16 << 10

// View renders the live area: what is in progress, the input box and the
// status line. Everything finished has been printed above it already.
func (m *Model) View() tea.View {
	if m.quitting || m.clearing != clearNone {
		return tea.NewView("")
	}
	var top, bottom []string
	if m.picking {
		top = append(top, m.pickerView()...)
	}
	for _, c := range m.tools {
		line := m.th.accent.Render(m.spin.View()) + " " + m.th.bold.Render(oneLine(clean(c.summary), m.width-14)) +
			m.th.dim.Render(" "+duration(m.now().Sub(c.start).Truncate(100*time.Millisecond)))
		top = append(top, line)
		for _, o := range c.output {
			top = append(top, m.th.dim.Render("  │ "+ansi.Truncate(o, max(m.width-4, 8), "…")))
		}
		top = append(top, m.subagentLines(c.id)...)
	}
	if len(m.approvals) > 0 {
		bottom = append(bottom, m.approvalView()...)
	}
	bottom = append(bottom, m.queuedView()...)
	bottom = append(bottom, m.offerView()...)
	if m.busy && len(m.tools) == 0 && len(m.approvals) == 0 {
		label := "Working…"
		if m.compacting {
			label = "Compacting…"
		}
		hint := "  (Esc to cancel)"
		if m.retry != "" {
			// How long, that Esc cancels, then why: the reason may be cut.
			left := max(m.retryAt.Sub(m.now()), 0).Round(time.Second)
			label = fmt.Sprintf("Request failed; sending it again in %s (attempt %d) · Esc cancels · %s", left, m.retryAttempt+1, m.retry)
			hint = ""
		}
		bottom = append(bottom, m.th.accent.Render(m.spin.View())+" "+m.th.dim.Render(oneLine(label+hint, m.width-2)))
	}
	if m.prompt != nil {
		bottom = append(bottom, m.promptView()...)
	}
	if m.feedback {
		bottom = append(bottom, m.th.bold.Render("Tell the model what to do instead (Enter sends, Esc goes back):"))
	}
	bottom = append(bottom, m.menuView()...)
	bottom = append(bottom, m.input.View())
	bottom = append(bottom, m.statusLine())

	room := m.height - 1 - len(top) - countLines(bottom)
	stream := m.streamTail(room)
	lines := append(top, stream...)
	lines = append(lines, bottom...)
	content := strings.Join(lines, "\n")
	m.noteView(strings.Count(content, "\n") + 1)
	return tea.NewView(content)
}

func countLines(parts []string) int {
	n := 0
	for _, p := range parts {
		n += strings.Count(p, "\n") + 1
	}
	return n
}

// streamTail returns the last lines of the reasoning and message streaming
// in, at most room of them.
func (m *Model) streamTail(room int) []string {
	if room <= 0 {
		return nil
	}
	var lines []string
	tail := func(s string) string {
		if len(s) > maxLiveBytes {
			s = s[len(s)-maxLiveBytes:]
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
			}
		}
		return s
	}
	if r := m.reasoning.String(); r != "" && m.stream.Len() == 0 && !m.answerStarted {
		rl := strings.Split(m.r.wrap(clean(strings.TrimSpace(tail(r)))), "\n")
		if more := len(rl) - reasoningLines; more > 0 && !m.r.fullReasoning {
			// Collapsed: the latest lines only (Ctrl-O shows them all).
			rl = append([]string{fmt.Sprintf("… %d earlier lines of reasoning (Ctrl-O: in full)", more)}, rl[more:]...)
		}
		for _, l := range rl {
			lines = append(lines, m.th.dim.Render("┊ "+l))
		}
	}
	if s := m.stream.String()[m.printedTo:]; s != "" {
		lines = append(lines, strings.Split(m.r.wrap(clean(strings.TrimRight(tail(s), "\n"))), "\n")...)
	}
	if len(lines) > room {
		lines = lines[len(lines)-room:]
	}
	return lines
}

// approvalView shows the first pending approval: what, why, the exact
// command or change, and the keys.
func (m *Model) approvalView() []string {
	a := m.approvals[0]
	w := max(m.width-2, 10)
	out := []string{m.th.warn.Render("╭ Allow " + oneLine(clean(a.ToolName), w-10) + "?")}
	bar := m.th.warn.Render("│ ")
	out = append(out, bar+m.th.bold.Render(oneLine(clean(a.Summary), w)))
	detail := m.approvalPreview(a, w)
	limit := max(m.height/3, 3)
	more := len(detail) - limit
	if more > 0 {
		detail = detail[:limit]
	}
	for _, l := range detail {
		out = append(out, bar+l)
	}
	switch {
	case m.expanded == a.RequestID:
		out = append(out, bar+m.th.dim.Render("(printed above in full)"))
	case more > 0:
		out = append(out, bar+m.th.dim.Render(fmt.Sprintf("… %d more lines · e shows all", more)))
	}
	if a.Error != "" {
		out = append(out, bar+m.th.dim.Render(oneLine("why: "+clean(a.Error), w-5)))
	}
	keys := "[y] yes  [s] this session  [a] always  [n] no  [f] no, with feedback  [e] all"
	if m.width < 80 {
		keys = "y once · s session · a always · n no · f feedback · e all"
	}
	out = append(out, m.th.warn.Render("╰ ")+m.th.bold.Render(keys))
	if a.Text != "" {
		out = append(out, m.th.dim.Render(oneLine("  always saves the rule "+clean(a.Text), w)))
	}
	if n := len(m.approvals) - 1; n > 0 {
		out = append(out, m.th.dim.Render(fmt.Sprintf("  %d more waiting", n)))
	}
	return out
}

// pickerView lists sessions to resume.
func (m *Model) pickerView() []string {
	out := []string{m.th.bold.Render("Resume a session (↑/↓, Enter; Esc closes)")}
	start := max(0, m.pick-7)
	for i := start; i < len(m.picks) && i < start+8; i++ {
		line := oneLine(sessionLine(m.picks[i]), m.width-3)
		if i == m.pick {
			out = append(out, m.th.accent.Render("› "+line))
		} else {
			out = append(out, "  "+line)
		}
	}
	return out
}

// statusLine shows the model, the mode, context use, tokens, cost and the
// session, cut to the width.
func (m *Model) statusLine() string {
	parts := []string{clean(m.model), m.mode}
	if m.sandbox != "" {
		parts = append(parts, m.sandbox)
	}
	if m.ctxPercent > 0 {
		parts = append(parts, fmt.Sprintf("ctx %.0f%%", m.ctxPercent))
	}
	parts = append(parts, fmt.Sprintf("turn ↑%s ↓%s", tokens(m.turnUsage.InputTokens), tokens(m.turnUsage.OutputTokens)),
		fmt.Sprintf("total ↑%s ↓%s", tokens(m.total.InputTokens), tokens(m.total.OutputTokens)))
	if m.costKnown {
		parts = append(parts, fmt.Sprintf("$%.4f", m.cost))
	}
	parts = append(parts, m.sess.ID)
	return m.th.status.Render(ansi.Truncate(strings.Join(parts, " · "), max(m.width-1, 10), "…"))
}
