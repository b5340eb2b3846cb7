package tui

import (
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// subagents holds the progress of the subagents that running task calls
// started, by the task call's id, for the lines shown under its card.
// Their events carry ParentSessionID; only their approvals take the usual
// way (the approval prompt), the rest lands here.
type subagents struct {
	byCall map[string]*subProgress
}

// subProgress is one subagent's progress.
type subProgress struct {
	agent   string
	current string   // what it is doing now: a tool call, or its answer coming in
	done    []string // its finished tool calls, the last few
	answer  strings.Builder
}

// maxSubLines is how many finished calls a subagent shows.
const maxSubLines = 3

// handle folds a subagent's event in.
func (s *subagents) handle(ev protocol.Event) {
	if s.byCall == nil {
		s.byCall = make(map[string]*subProgress)
	}
	p, ok := s.byCall[ev.ParentToolCallID]
	if !ok {
		p = &subProgress{}
		s.byCall[ev.ParentToolCallID] = p
	}
	switch ev.Type {
	case protocol.EventSessionCreated:
		if ev.Session != nil {
			p.agent = ev.Session.Agent
		}
	case protocol.EventMessageDelta:
		p.answer.WriteString(ev.Text)
		p.current = "✎ " + lastLine(p.answer.String())
	case protocol.EventMessageCompleted:
		p.answer.Reset()
	case protocol.EventToolStarted:
		p.current = "• " + ev.Summary
	case protocol.EventToolCompleted:
		mark := "✓ "
		if ev.OK != nil && !*ev.OK {
			mark = "✗ "
		}
		p.done = append(p.done, mark+ev.Summary)
		if n := len(p.done); n > maxSubLines {
			p.done = p.done[n-maxSubLines:]
		}
		p.current = ""
	case protocol.EventTurnFailed:
		p.current = "✗ " + ev.Error
	}
}

// drop forgets the subagent of a finished task call.
func (s *subagents) drop(callID string) { delete(s.byCall, callID) }

// lines renders the progress of the subagent of task call callID, to go
// under its card.
func (m *Model) subagentLines(callID string) []string {
	p, ok := m.subs.byCall[callID]
	if !ok {
		return nil
	}
	var out []string
	for _, d := range p.done {
		out = append(out, m.th.dim.Render("  ↳ "+oneLine(clean(d), max(m.width-6, 8))))
	}
	if p.current != "" {
		out = append(out, m.th.dim.Render("  ↳ "+oneLine(clean(p.current), max(m.width-6, 8))))
	}
	return out
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
