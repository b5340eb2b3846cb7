package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The events of a running turn, folded into the Model, and its end.

// handleEvent folds one event of the turn into the Model.
func (m *Model) handleEvent(ev protocol.Event) {
	if ev.ParentSessionID != "" && ev.Type != protocol.EventPermissionRequested && ev.Type != protocol.EventPermissionResolved {
		m.subs.handle(ev) // a subagent's progress (subagent.go)
		return
	}
	switch ev.Type {
	case protocol.EventTurnStarted:
		if m.turnsSeen > 0 && len(m.queued) > 0 {
			// The core sends the queued messages as one more turn.
			m.printQueuedAsSent()
		}
		m.turnsSeen++
		if ev.Model != "" {
			m.model = ev.Model
		}
	case protocol.EventMessageDelta:
		m.token()
		m.streamDelta(ev.Text)
	case protocol.EventReasoningDelta:
		m.token()
		m.reasoning.WriteString(ev.Text)
	case protocol.EventMessageCompleted:
		if ev.Message != nil && ev.Message.Role == protocol.RoleUser {
			return // printed when it was sent
		}
		m.answered = true
		m.completeAnswer(ev)
	case protocol.EventToolStarted:
		m.tools = append(m.tools, &toolCard{id: ev.ToolCallID, name: ev.ToolName, summary: ev.Summary, start: m.now()})
	case protocol.EventToolOutput:
		for _, c := range m.tools {
			if c.id == ev.ToolCallID {
				lines := strings.Split(strings.TrimRight(clean(ev.Text), "\n"), "\n")
				c.output = append(c.output, lines...)
				if n := len(c.output); n > 3 {
					c.output = c.output[n-3:]
				}
			}
		}
	case protocol.EventToolCompleted:
		for i, c := range m.tools {
			if c.id == ev.ToolCallID {
				m.tools = append(m.tools[:i], m.tools[i+1:]...)
				break
			}
		}
		m.subs.drop(ev.ToolCallID)
		m.print(m.r.toolCard(ev))
		if note := m.changesNote(ev.Changes); note != "" {
			m.print(note)
		}
	case protocol.EventPermissionRequested:
		n := len(m.approvals)
		m.approvals = append(m.approvals, ev)
		m.noteApprovals(n)
	case protocol.EventPermissionResolved:
		n := len(m.approvals)
		if m.dropApproval(ev.RequestID) {
			m.answeredElsewhere(ev)
		}
		m.noteApprovals(n)
	case protocol.EventUsage:
		if ev.Usage != nil {
			m.turnUsage.Add(*ev.Usage)
			m.total.Add(*ev.Usage)
		}
		if ev.ContextPercent > 0 {
			m.ctxPercent = ev.ContextPercent
		}
		if ev.CostUSD != nil {
			m.cost += *ev.CostUSD
			m.costKnown = true
		}
	case protocol.EventTodoUpdated:
		m.todos = ev.Todos
		m.print(m.todoList())
	case protocol.EventWarning, protocol.EventHookWarning:
		m.print(m.th.warn.Render("⚠ " + clean(ev.Text)))
	case protocol.EventMemoryCandidate:
		m.printCandidate(ev.Candidate) // extras.go
	case protocol.EventRetry:
		// The request is sent again: what streamed of it is dropped.
		m.restartAnswer()
		m.retry = oneLine(clean(ev.Error), 200)
		m.retryAt = m.now().Add(time.Duration(ev.DelayMS) * time.Millisecond)
		m.retryAttempt = ev.Attempt
	case protocol.EventCompaction:
		if ev.ContextPercent > 0 {
			m.ctxPercent = ev.ContextPercent // what the compaction left
		}
		m.compacted = -1
		var n int
		if _, err := fmt.Sscanf(ev.Text, "compacted %d messages", &n); err == nil {
			m.compacted = n
		}
	case protocol.EventTurnCompleted:
		if ev.ContextPercent > 0 {
			m.ctxPercent = ev.ContextPercent
		}
	case protocol.EventTurnFailed:
		m.failCode = ev.Code
	case protocol.EventInputReturned:
		m.inputReturned(ev)
	case protocol.EventInputEdited, protocol.EventInputRemoved:
		m.queueChanged(ev)
	}
}

// token notes the first token of the turn. The time the user took to
// answer approvals before it is not the model's, and is left out.
func (m *Model) token() {
	if !m.gotToken {
		m.gotToken = true
		m.firstToken = m.now().Sub(m.turnStart) - m.waited()
	}
	m.retry = ""
}

// waited is how long the turn has waited for the user's approvals.
func (m *Model) waited() time.Duration {
	w := m.approvalTime
	if len(m.approvals) > 0 && !m.askedAt.IsZero() {
		w += m.now().Sub(m.askedAt)
	}
	return w
}

// noteApprovals keeps the time approvals are shown: call it before and
// after the list of approvals changes.
func (m *Model) noteApprovals(before int) {
	switch now := len(m.approvals); {
	case before == 0 && now > 0:
		m.askedAt = m.now()
	case before > 0 && now == 0 && !m.askedAt.IsZero():
		m.approvalTime += m.now().Sub(m.askedAt)
		m.askedAt = time.Time{}
	}
}

// dropApproval takes an approval off the prompt; it reports whether it
// was still there (not answered here).
func (m *Model) dropApproval(id string) bool {
	for i, a := range m.approvals {
		if a.RequestID == id {
			m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
			if i == 0 && m.feedback {
				// The feedback being typed is for an answer given
				// elsewhere meanwhile.
				m.feedback = false
				m.input.Reset()
			}
			return true
		}
	}
	return false
}

// answeredElsewhere prints the answer another front end gave to an
// approval this prompt showed (the web panel, `mx-claw approve`).
func (m *Model) answeredElsewhere(ev protocol.Event) {
	by := ev.AnsweredBy
	if by == "" {
		by = "another window"
	}
	approved := ev.OK != nil && *ev.OK
	verdict, mark := "Allowed by "+by, m.th.ok.Render("✓ ")
	if !approved {
		verdict, mark = "Denied by "+by, m.th.fail.Render("✗ ")
		if ev.Text != "" {
			verdict += ": " + clean(ev.Text)
		}
	}
	m.print(mark + m.th.dim.Render(oneLine(verdict+" — "+clean(ev.Summary), m.width-4)))
}

// turnDone prints how the turn ended and what it cost.
func (m *Model) turnDone(err error) []tea.Cmd {
	m.busy = false
	if pe := promptErased(nil); errors.As(err, &pe) && pe.PromptErased() {
		m.hist.drop(m.turnInput)
	}
	m.cutAnswer()
	for _, c := range m.tools {
		m.print(m.th.fail.Render("✗ ") + clean(oneLine(c.summary, m.width-10)) + m.th.dim.Render(" (interrupted)"))
	}
	if m.feedback {
		m.input.Reset()
	}
	m.tools, m.approvals, m.feedback, m.retry = nil, nil, false, ""
	m.subs = subagents{}
	m.ended(err)
	m.turnFailed = err != nil
	if len(m.queued) > 0 && err == nil {
		// Queued just as the turn ended: send it now.
		m.printQueuedAsSent()
		return m.startTurn("")
	}
	return nil
}

// telemetry describes the turn just ended.
func (m *Model) telemetry() string {
	parts := []string{}
	if m.gotToken {
		parts = append(parts, "first token "+duration(m.firstToken))
	}
	parts = append(parts, "took "+duration(m.now().Sub(m.turnStart)))
	parts = append(parts, fmt.Sprintf("↑%s ↓%s", tokens(m.turnUsage.InputTokens), tokens(m.turnUsage.OutputTokens)))
	return "  " + strings.Join(parts, " · ")
}
