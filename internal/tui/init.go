package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// initBackend is a Backend that knows the /init message.
type initBackend interface {
	// InitPrompt returns the message that asks the model to survey the
	// repository and write or improve AGENTS.md, with extra instructions.
	InitPrompt(extra string) string
}

// initCommand runs /init: a turn whose message asks the model to write or
// improve AGENTS.md; the write is approved like any other.
func (m *Model) initCommand(text string) []tea.Cmd {
	ib, ok := m.backend.(initBackend)
	if !ok {
		m.print(m.th.dim.Render("/init is not available here."))
		return nil
	}
	if m.busy {
		m.print(m.th.warn.Render("/init is not available while a turn runs; press Esc to cancel it first."))
		return nil
	}
	extra := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "/init"))
	m.print(m.r.user(text))
	m.turnInput = text
	return m.startTurn(ib.InitPrompt(extra))
}
