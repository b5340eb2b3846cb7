package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// What the REPL offers beyond its own commands, when the backend provides
// it (ExtrasBackend): /memory, /skills and /context, and the user's custom
// slash commands, which /help lists and Tab completes. A custom command
// runs as a turn: its text ("/name args") goes to Backend.Run, which
// expands it. Kept apart from commands.go, input.go and slashmenu.go,
// which only call extraCommand, extraHelp, extraNames and extraMenuItems.

// ExtrasBackend is what a backend implements to give the REPL memory,
// skills, the context report and custom slash commands.
type ExtrasBackend interface {
	// CustomCommands lists the custom slash commands of the workspace.
	CustomCommands(ctx context.Context) []protocol.SlashCommand
	// MemoryCommand runs /memory (args after the name): lists, accepts,
	// rejects or edits memory candidates, and returns what to print.
	MemoryCommand(ctx context.Context, args []string) (string, error)
	// SkillsCommand runs /skills: lists skills and proposals, accepts or
	// rejects proposals.
	SkillsCommand(ctx context.Context, sessionID string, args []string) (string, error)
	// ContextReport describes what the session's system prompt holds and
	// what each part costs (/context).
	ContextReport(ctx context.Context, sessionID string) (string, error)
}

// extraCommands are the REPL commands an ExtrasBackend adds.
var extraCommands = []slashCommand{
	{"/memory", "[accept|reject ID]", "review what you asked to be remembered"},
	{"/skills", "[proposed|accept|reject NAME]", "list skills; review proposed ones"},
	{"/context", "", "show what the system prompt holds and its token cost"},
}

func (m *Model) extras() (ExtrasBackend, bool) {
	x, ok := m.backend.(ExtrasBackend)
	return x, ok
}

// customCommands returns the custom commands whose names no REPL command
// takes.
func (m *Model) customCommands() []protocol.SlashCommand {
	x, ok := m.extras()
	if !ok {
		return nil
	}
	var out []protocol.SlashCommand
	for _, c := range x.CustomCommands(m.ctx) {
		if !builtinCommand("/" + c.Name) {
			out = append(out, c)
		}
	}
	return out
}

func builtinCommand(name string) bool {
	for _, list := range [][]slashCommand{slashCommands, extraCommands} {
		for _, c := range list {
			if c.name == name {
				return true
			}
		}
	}
	return name == "/quit"
}

// extraNames returns the names Tab completes besides the REPL's own.
func (m *Model) extraNames() []string {
	if _, ok := m.extras(); !ok {
		return nil
	}
	var names []string
	for _, c := range extraCommands {
		names = append(names, c.name)
	}
	for _, c := range m.customCommands() {
		names = append(names, "/"+c.Name)
	}
	return names
}

// extraMenuItems returns what the slash menu lists besides the REPL's own
// commands: /memory, /skills, /context and the custom commands.
func (m *Model) extraMenuItems() []slashCommand {
	if _, ok := m.extras(); !ok {
		return nil
	}
	out := slices.Clone(extraCommands)
	for _, c := range m.customCommands() {
		out = append(out, slashCommand{name: "/" + c.Name, args: c.ArgumentHint, help: c.Description})
	}
	return out
}

// extraHelp adds the extra commands to /help.
func (m *Model) extraHelp(sb *strings.Builder) {
	if _, ok := m.extras(); !ok {
		return
	}
	for _, c := range extraCommands {
		fmt.Fprintf(sb, "  %-13s %s\n", c.name, strings.TrimSpace(c.args+"  "+m.th.dim.Render(c.help)))
	}
	custom := m.customCommands()
	if len(custom) == 0 {
		return
	}
	sb.WriteString(m.th.bold.Render("Custom commands") + "\n")
	for _, c := range custom {
		desc := c.Description
		if c.Source != "user" {
			desc += " (" + c.Source + ")"
		}
		fmt.Fprintf(sb, "  %-13s %s\n", "/"+clean(c.Name), strings.TrimSpace(clean(c.ArgumentHint)+"  "+m.th.dim.Render(oneLine(clean(desc), 70))))
	}
}

// extraCommand runs /memory, /skills, /context or a custom command; ok is
// false when name is none of them.
func (m *Model) extraCommand(name, text string) ([]tea.Cmd, bool) {
	x, ok := m.extras()
	if !ok {
		return nil, false
	}
	args := strings.Fields(text)[1:]
	ctx, sid := m.ctx, m.sess.ID
	notice := func(f func() (string, error)) []tea.Cmd {
		return []tea.Cmd{func() tea.Msg {
			out, err := f()
			return noticeMsg{text: clean(strings.TrimRight(out, "\n")), err: err}
		}}
	}
	switch name {
	case "/memory":
		return notice(func() (string, error) { return x.MemoryCommand(ctx, args) }), true
	case "/skills":
		return notice(func() (string, error) { return x.SkillsCommand(ctx, sid, args) }), true
	case "/context":
		return notice(func() (string, error) { return x.ContextReport(ctx, sid) }), true
	}
	for _, c := range m.customCommands() {
		if "/"+c.Name != name {
			continue
		}
		if m.busy {
			m.print(m.th.warn.Render(name + " is not available while a turn runs; press Esc to cancel it first."))
			return nil, true
		}
		m.print(m.r.user(text))
		m.turnInput = text
		return m.startTurn(strings.TrimSpace(text)), true
	}
	return nil, false
}

// printCandidate tells the user a request to remember is waiting for them.
func (m *Model) printCandidate(c *protocol.MemoryCandidate) {
	if c == nil {
		return
	}
	m.print(m.th.dim.Render(oneLine(fmt.Sprintf("✎ To remember (%s): %s — /memory accept %s", c.File, clean(c.Text), c.ID), m.width)))
}
