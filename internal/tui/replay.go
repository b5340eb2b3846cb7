package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// replay prints a resumed session's stored events as the live view showed
// them: each message as the user typed it (attachments noted, not
// printed), answers as Markdown, tool cards with their titles and
// timings, approvals answered, the partial answer of a turn cancelled or
// cut off, and each turn's telemetry.
func (m *Model) replay(evs []protocol.Event) {
	for _, ev := range evs {
		switch ev.Type {
		case protocol.EventMessageCompleted:
			msg := ev.Message
			if msg == nil {
				continue
			}
			switch msg.Role {
			case protocol.RoleUser:
				text, atts := splitAttachments(msg.Content)
				m.print(m.r.user(text))
				m.printAttachments(atts, nil)
			case protocol.RoleAssistant:
				m.print(m.r.reasoning(msg.Reasoning))
				if strings.TrimSpace(msg.Content) != "" {
					m.print(m.r.markdown(msg.Content))
				}
			}
		case protocol.EventToolCompleted:
			m.print(m.r.toolCard(ev))
			if note := m.changesNote(ev.Changes); note != "" {
				m.print(note)
			}
		case protocol.EventCheckpointRestored, protocol.EventConversationRewound:
			m.replayTimeTravel(ev)
		case protocol.EventPermissionResolved:
			verdict, mark := "Allowed", m.th.ok.Render("✓ ")
			if ev.OK != nil && !*ev.OK {
				verdict, mark = "Denied", m.th.fail.Render("✗ ")
				if ev.Text != "" {
					verdict += ": " + clean(ev.Text)
				}
			}
			m.print(mark + m.th.dim.Render(oneLine(verdict+" — "+clean(ev.Summary), m.width-4)))
		case protocol.EventTodoUpdated:
			m.todos = ev.Todos
			m.print(m.todoList())
		case protocol.EventWarning, protocol.EventHookWarning:
			m.print(m.th.warn.Render("⚠ " + clean(ev.Text)))
		case protocol.EventTurnCompleted:
			m.print(m.th.dim.Render(storedTelemetry(ev)))
			if ev.ContextPercent > 0 {
				m.ctxPercent = ev.ContextPercent
			}
		case protocol.EventTurnCancelled:
			if strings.TrimSpace(ev.Text) != "" {
				m.print(m.r.wrap(clean(ev.Text)))
			}
			m.print(m.th.warn.Render("Cancelled."))
		case protocol.EventTurnFailed:
			if strings.TrimSpace(ev.Text) != "" {
				m.print(m.r.wrap(clean(ev.Text)))
			}
			m.print(m.th.fail.Render("Request failed: " + clean(ev.Error)))
		case protocol.EventCompaction:
			m.print(m.th.dim.Render("Compacted the older messages; the model saw a summary from here on."))
		}
	}
}

// storedTelemetry describes a finished turn from its turn.completed event.
func storedTelemetry(ev protocol.Event) string {
	var parts []string
	if ev.FirstTokenMS > 0 {
		parts = append(parts, "first token "+duration(time.Duration(ev.FirstTokenMS)*time.Millisecond))
	}
	parts = append(parts, "took "+duration(time.Duration(ev.DurationMS)*time.Millisecond))
	if u := ev.Usage; u != nil {
		parts = append(parts, fmt.Sprintf("↑%s ↓%s", tokens(u.InputTokens), tokens(u.OutputTokens)))
	}
	return "  " + strings.Join(parts, " · ")
}
