package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"
)

// Shift+Tab cycles the session's permission mode (default → acceptEdits →
// plan, and bypass only in a REPL started in it); /permissions MODE sets
// it. The status line shows the mode in force.

// modeMsg is the result of a mode change.
type modeMsg struct {
	mode string
	err  error
}

// modeHelp says in a few words what each mode does.
var modeHelp = map[string]string{
	"default":     "reads run; edits and commands ask",
	"acceptEdits": "edits in the workspace run without asking; commands ask",
	"plan":        "read-only: the model plans, nothing is changed",
	"bypass":      "everything runs but deny rules and hard checks",
}

// cycleMode switches to the next mode of the cycle.
func (m *Model) cycleMode() []tea.Cmd {
	modes := m.backend.Modes()
	if len(modes) == 0 {
		return nil
	}
	next := modes[0]
	if i := slices.Index(modes, m.mode); i >= 0 {
		next = modes[(i+1)%len(modes)]
	}
	return m.setMode(next)
}

// setMode asks the backend for a mode.
func (m *Model) setMode(mode string) []tea.Cmd {
	b, ctx, sid := m.backend, m.ctx, m.sess.ID
	return []tea.Cmd{func() tea.Msg {
		got, err := b.SetMode(ctx, sid, mode)
		return modeMsg{mode: got, err: err}
	}}
}

// modeSet shows the mode now in force.
func (m *Model) modeSet(msg modeMsg) {
	if msg.err != nil {
		m.print(m.th.fail.Render(clean(msg.err.Error())))
		return
	}
	m.mode = msg.mode
	line := "Permission mode: " + msg.mode
	if h := modeHelp[msg.mode]; h != "" {
		line += " (" + h + ")"
	}
	if m.busy {
		line += "; from the next message"
	}
	m.print(m.th.dim.Render(oneLine(line, m.width)))
}
