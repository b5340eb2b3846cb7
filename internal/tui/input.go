package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// doubleCtrlC is how soon a second Ctrl-C must follow the first to exit.
const doubleCtrlC = 2 * time.Second

// handleKey routes a key press: the sessions picker and an approval take
// keys first; otherwise the input box gets them.
func (m *Model) handleKey(k tea.KeyPressMsg) []tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return m.ctrlC()
	}
	m.ctrlCAt = time.Time{}
	if s == "ctrl+o" {
		m.toggleReasoning()
		return nil
	}
	if s == "shift+tab" && m.prompt == nil && !m.picking {
		return m.cycleMode()
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	if m.picking {
		return m.pickerKey(s)
	}
	if len(m.approvals) > 0 && !m.feedback {
		return m.approvalKey(s)
	}
	if cmds, took := m.offerKey(s); took {
		return cmds
	}
	if cmds, took := m.menuKey(s); took {
		return cmds
	}
	switch s {
	case "esc":
		if m.feedback {
			m.feedback = false
			m.input.Reset()
			return nil
		}
		if m.busy && m.backend.Cancel(m.sess.ID) {
			m.print(m.th.dim.Render("Cancelling…"))
		}
		return nil
	case "ctrl+d":
		if m.input.Value() == "" {
			m.quit()
		}
		return nil
	case "enter":
		v := m.input.Value()
		if strings.HasSuffix(v, "\\") && m.input.Line() == m.input.LineCount()-1 {
			// `\` + Enter continues on a new line.
			m.input.SetValue(strings.TrimSuffix(v, "\\") + "\n")
			return nil
		}
		return m.submit()
	case "up":
		if len(m.queued) > 0 && m.input.Value() == "" {
			return m.editQueued()
		}
		if m.input.Line() == 0 {
			if e, ok := m.hist.prev(m.input.Value()); ok {
				m.input.SetValue(e)
			}
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 {
			if e, ok := m.hist.next(); ok {
				m.input.SetValue(e)
			}
			return nil
		}
	case "tab":
		m.complete()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return []tea.Cmd{cmd}
}

// ctrlC stops what is going on, one thing per press: a question, a
// running turn (as Esc), the text typed; on an idle, empty prompt a
// second press within doubleCtrlC quits.
func (m *Model) ctrlC() []tea.Cmd {
	switch {
	case m.prompt != nil:
		m.closePrompt(promptAnswer{err: modelcmd.ErrCancelled})
		m.ctrlCAt = time.Time{}
		return nil
	case m.busy:
		m.ctrlCAt = time.Time{}
		if m.backend.Cancel(m.sess.ID) {
			m.print(m.th.dim.Render("Cancelling…"))
		}
		return nil
	case m.input.Value() != "":
		m.input.Reset()
		m.ctrlCAt = time.Time{}
		return nil
	case !m.ctrlCAt.IsZero() && m.now().Sub(m.ctrlCAt) < doubleCtrlC:
		m.quit()
		return nil
	}
	m.ctrlCAt = m.now()
	m.print(m.th.dim.Render("Press Ctrl-C again to exit."))
	return nil
}

// toggleReasoning switches between reasoning collapsed to its first lines
// and reasoning in full, for the live area and what is printed from now
// on (the scrollback already printed cannot be re-rendered).
func (m *Model) toggleReasoning() {
	m.r.fullReasoning = !m.r.fullReasoning
	if m.r.fullReasoning {
		m.print(m.th.dim.Render("Reasoning shown in full from now on (Ctrl-O collapses it; /reasoning prints the last answer's)."))
	} else {
		m.print(m.th.dim.Render(fmt.Sprintf("Reasoning collapsed to %d lines from now on (Ctrl-O shows it in full).", reasoningLines)))
	}
}

// quit ends the program: the running turn is cancelled by the caller's
// context when Run returns.
func (m *Model) quit() {
	if m.busy {
		m.backend.Cancel(m.sess.ID)
	}
	m.quitting = true
}

// submit sends what was typed: feedback for a rejection, a slash command,
// a message queued while busy, or a new turn.
func (m *Model) submit() []tea.Cmd {
	raw := m.input.Value()
	text := strings.TrimSpace(raw)
	if m.feedback && len(m.approvals) > 0 {
		m.input.Reset()
		m.feedback = false
		return m.answer(false, protocol.ScopeOnce, text)
	}
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.hist.add(raw)
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	send, atts, refused := attachMentions(m.backend.Workspace(), text)
	imgs, badImgs := imageMentions(m.backend.Workspace(), text)
	refused = append(refused, badImgs...)
	if m.busy {
		if len(imgs) > 0 {
			refused = append(refused, "images are not queued: send them again once the turn has ended")
		}
		m.printAttachments(atts, refused)
		return []tea.Cmd{m.enqueue(text, send)}
	}
	if m.isRetry(text) {
		return m.startAgain("↻ Sending the request again (the message is in the session already).")
	}
	m.print(m.r.user(text))
	m.printAttachments(atts, refused)
	m.printImages(imgs)
	m.turnInput, m.turnImages = raw, imgs
	cmds := m.startTurn(send)
	m.turnPrompt = text
	return cmds
}

// approvalKey answers the approval shown: y once, s for the session, a
// always for this project, n no, f no with feedback; Esc cancels the turn.
func (m *Model) approvalKey(s string) []tea.Cmd {
	switch s {
	case "y", "Y":
		return m.answer(true, protocol.ScopeOnce, "")
	case "s", "S":
		return m.answer(true, protocol.ScopeSession, "")
	case "a", "A":
		return m.answer(true, protocol.ScopeAlways, "")
	case "n", "N":
		return m.answer(false, protocol.ScopeOnce, "")
	case "f", "F":
		m.feedback = true
		m.input.Reset()
		return nil
	case "e", "E":
		m.expandApproval()
		return nil
	case "esc":
		if m.busy && m.backend.Cancel(m.sess.ID) {
			m.print(m.th.dim.Render("Cancelling…"))
		}
	}
	return nil
}

// answer sends the decision on the first approval and prints it.
func (m *Model) answer(approve bool, scope protocol.ApprovalScope, feedback string) []tea.Cmd {
	a := m.approvals[0]
	m.approvals = m.approvals[1:]
	m.noteApprovals(len(m.approvals) + 1)
	verdict := map[protocol.ApprovalScope]string{protocol.ScopeOnce: "Allowed once", protocol.ScopeSession: "Allowed for this session",
		protocol.ScopeAlways: "Allowed always in this project"}[scope]
	if !approve {
		verdict = "Denied"
		if feedback != "" {
			verdict += ": " + clean(feedback)
		}
	}
	mark := m.th.ok.Render("✓ ")
	if !approve {
		mark = m.th.fail.Render("✗ ")
	}
	m.print(mark + m.th.dim.Render(oneLine(verdict+" — "+clean(a.Summary), m.width-4)))
	b, ctx := m.backend, m.ctx
	ans := protocol.ResolveApproval{SessionID: a.SessionID, RequestID: a.RequestID, Approve: approve, Scope: scope, Feedback: feedback}
	if ans.SessionID == "" {
		ans.SessionID = m.sess.ID
	}
	return []tea.Cmd{func() tea.Msg {
		if err := b.Answer(ctx, ans); err != nil && ctx.Err() == nil && !isContextErr(err) {
			return noticeMsg{err: err}
		}
		return nil
	}}
}

func isContextErr(err error) bool {
	return err == context.Canceled || err == context.DeadlineExceeded
}

// complete completes a slash command with Tab: to the one match, or to
// the longest common prefix of several (which are listed).
func (m *Model) complete() {
	v := m.input.Value()
	if i := lastWord(v); strings.HasPrefix(v[i:], "@") {
		m.completeMention(v[:i], v[i:])
		return
	}
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return
	}
	var matches []string
	for _, c := range slashCommands {
		if strings.HasPrefix(c.name, v) {
			matches = append(matches, c.name)
		}
	}
	for _, n := range m.extraNames() {
		if strings.HasPrefix(n, v) {
			matches = append(matches, n)
		}
	}
	switch len(matches) {
	case 0:
		return
	case 1:
		m.input.SetValue(matches[0] + " ")
		return
	}
	prefix := commonPrefix(matches)
	if prefix != v {
		m.input.SetValue(prefix)
		return
	}
	m.print(m.th.dim.Render(strings.Join(matches, "  ")))
}

// completeMention completes the @path word at the end of the input: to
// the one match (a file is followed by a space), or to the longest common
// prefix of several (which are listed).
func (m *Model) completeMention(before, word string) {
	matches := mentionCandidates(m.backend.Workspace(), word)
	switch len(matches) {
	case 0:
		return
	case 1:
		c := matches[0]
		if !strings.HasSuffix(c, "/") {
			c += " "
		}
		m.input.SetValue(before + c)
		return
	}
	if prefix := commonPrefix(matches); prefix != word {
		m.input.SetValue(before + prefix)
		return
	}
	names := make([]string, len(matches))
	for i, c := range matches {
		names[i] = clean(c)
	}
	m.print(m.th.dim.Render(strings.Join(names, "  ")))
}

// printAttachments notes the files an @path mention attached and those
// refused.
func (m *Model) printAttachments(atts []attachment, refused []string) {
	for _, a := range atts {
		n := "lines"
		if a.lines == 1 {
			n = "line"
		}
		m.print(m.th.dim.Render(oneLine(fmt.Sprintf("  attached: %s (%d %s)", clean(a.rel), a.lines, n), m.width)))
	}
	for _, r := range refused {
		m.print(m.th.warn.Render(oneLine("  "+clean(r), m.width)))
	}
}
