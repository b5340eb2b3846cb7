package tui

import (
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The slash menu opens when the input box holds a "/" word and nothing
// else: it lists the commands that start with what is typed, each with its
// one-line description, and filters as the user types. ↑/↓ choose, Tab
// completes, Enter runs the chosen command (or completes one that needs an
// argument), Esc closes it until the input changes.

// maxMenuRows bounds the commands the menu shows at once.
const maxMenuRows = 8

// menuItems returns the commands the menu lists now; none when it is
// closed.
func (m *Model) menuItems() []slashCommand {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") || v == m.menuClosed ||
		m.prompt != nil || m.picking || len(m.approvals) > 0 || m.feedback {
		return nil
	}
	var out []slashCommand
	for _, c := range append(slices.Clip(slashCommands), m.extraMenuItems()...) {
		if strings.HasPrefix(c.name, v) {
			out = append(out, c)
		}
	}
	return out
}

// menuKey handles a key while the menu is open; it reports whether it
// took the key.
func (m *Model) menuKey(s string) ([]tea.Cmd, bool) {
	items := m.menuItems()
	if len(items) == 0 {
		return nil, false
	}
	m.menuSel = min(m.menuSel, len(items)-1)
	switch s {
	case "up":
		m.menuSel = (m.menuSel + len(items) - 1) % len(items)
	case "down":
		m.menuSel = (m.menuSel + 1) % len(items)
	case "tab":
		m.input.SetValue(items[m.menuSel].name + " ")
		m.menuSel = 0
	case "enter":
		c := items[m.menuSel]
		m.menuSel = 0
		if strings.HasPrefix(c.args, "ID") || strings.HasPrefix(c.args, "NAME") {
			m.input.SetValue(c.name + " ") // it needs an argument
			return nil, true
		}
		m.input.SetValue(c.name)
		return m.submit(), true
	case "esc":
		m.menuClosed = m.input.Value()
		m.menuSel = 0
	default:
		return nil, false
	}
	return nil, true
}

// menuView renders the open menu, the chosen command marked.
func (m *Model) menuView() []string {
	items := m.menuItems()
	if len(items) == 0 {
		return nil
	}
	sel := min(m.menuSel, len(items)-1)
	start := 0
	if sel >= maxMenuRows {
		start = sel - maxMenuRows + 1
	}
	var out []string
	for i := start; i < len(items) && i < start+maxMenuRows; i++ {
		c := items[i]
		line := oneLine(padRight(c.name, 13)+" "+c.help, m.width-3)
		if i == sel {
			out = append(out, m.th.accent.Render("› "+line))
		} else {
			out = append(out, "  "+m.th.dim.Render(line))
		}
	}
	if more := len(items) - (start + maxMenuRows); more > 0 {
		out = append(out, m.th.dim.Render("  … "+plural(more, "more command")))
	}
	out = append(out, m.th.dim.Render("  ↑/↓ choose · Enter run · Tab complete · Esc close"))
	return out
}

// padRight pads s with spaces to w columns.
func padRight(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
