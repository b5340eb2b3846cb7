package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// /clear empties the terminal and its scrollback, as `clear` does.
//
// Bubble Tea's ClearScreen only erases the inline live area, leaving
// everything printed above it. Clearing the terminal behind the renderer's
// back is safe only when the renderer's idea of where the cursor is stays
// true, so it goes in steps: the live area is drawn empty (the renderer
// then erases it and rests at its top, the cursor's place), the terminal
// is cleared with the cursor sent home — the same place, now at the top —
// and the live area is drawn again from there.

// clearStep says the next step of a /clear.
type clearStep int

const (
	clearNone  clearStep = iota
	clearBlank           // the live area is drawn empty
	clearWipe            // the terminal is being cleared
)

// clearMsg moves a /clear to its next step.
type clearMsg struct{}

// clearPause is longer than the renderer takes to draw a frame.
const clearPause = 80 * time.Millisecond

// startClear begins a /clear.
func (m *Model) startClear() []tea.Cmd {
	m.clearing = clearBlank
	return []tea.Cmd{tea.Tick(clearPause, func(time.Time) tea.Msg { return clearMsg{} })}
}

// clearNext takes a /clear to its next step.
func (m *Model) clearNext() []tea.Cmd {
	switch m.clearing {
	case clearBlank:
		m.clearing = clearWipe
		seq := ansi.CursorHomePosition + ansi.EraseEntireScreen + ansi.EraseDisplay(3)
		return []tea.Cmd{tea.Sequence(tea.Raw(seq), tea.Tick(clearPause, func(time.Time) tea.Msg { return clearMsg{} }))}
	case clearWipe:
		m.clearing = clearNone
	}
	return nil
}
