package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// slashCommand is one command of the REPL.
type slashCommand struct {
	name, args, help string
}

// slashCommands are the REPL's commands, in the order /help lists them.
var slashCommands = []slashCommand{
	{"/help", "", "show this help"},
	{"/new", "", "start a new session"},
	{"/sessions", "[QUERY]", "resume a session of this workspace; with words, search"},
	{"/resume", "ID", "resume a session"},
	{"/model", "[status|default P/M|ID|…]", "pick the session's model from every provider's"},
	{"/permissions", "[MODE]", "show the rules, or set the mode (Shift+Tab cycles it)"},
	{"/compact", "[instructions]", "summarise older messages to free context"},
	{"/retry", "", "send the last request again (after a failure or a step limit)"},
	timeTravelCommands[0],
	timeTravelCommands[1],
	{"/todo", "", "show the model's task list"},
	{"/ps", "[kill ID]", "list background processes, or stop one"},
	{"/add-dir", "[DIR]", "let the tools use a directory beside the workspace"},
	{"/init", "[instructions]", "write or improve AGENTS.md for this repository"},
	{"/cost", "", "show tokens and estimated cost"},
	{"/reasoning", "", "print the last answer's reasoning in full"},
	{"/clear", "", "clear the screen"},
	{"/exit", "", "leave mx-claw (also Ctrl-D, Ctrl-C twice)"},
}

// command runs a slash command typed by the user.
func (m *Model) command(text string) []tea.Cmd {
	fields := strings.Fields(text)
	name, args := fields[0], fields[1:]
	b, ctx, sid := m.backend, m.ctx, m.sess.ID
	busyRefusal := func() bool {
		if m.busy {
			m.print(m.th.warn.Render(name + " is not available while a turn runs; press Esc to cancel it first."))
		}
		return m.busy
	}
	switch name {
	case "/help":
		m.print(m.help())
	case "/exit", "/quit":
		m.quit()
	case "/clear":
		return m.startClear()
	case "/new":
		if busyRefusal() {
			return nil
		}
		return []tea.Cmd{func() tea.Msg {
			s, err := b.NewSession(ctx)
			return sessionMsg{sess: s, err: err}
		}}
	case "/resume":
		if busyRefusal() {
			return nil
		}
		if len(args) != 1 {
			m.print(m.th.warn.Render("usage: /resume ID (/sessions lists them)"))
			return nil
		}
		return []tea.Cmd{resumeCmd(m, args[0])}
	case "/sessions":
		if busyRefusal() {
			return nil
		}
		if len(args) > 0 {
			return m.searchSessions(strings.Join(args, " "))
		}
		return []tea.Cmd{func() tea.Msg {
			list, err := b.ListSessions(ctx, 20)
			return sessionsMsg{list: list, err: err}
		}}
	case "/model":
		if len(args) > 0 && busyRefusal() {
			return nil
		}
		if len(args) == 0 {
			args = []string{"pick"}
		}
		p := uiPrompter{events: m.events}
		return []tea.Cmd{func() tea.Msg {
			out, model, err := b.ModelCommand(ctx, sid, args, p)
			return modelMsg{out: out, model: model, err: err}
		}}
	case "/undo", "/rewind":
		if busyRefusal() {
			return nil
		}
		return m.timeTravel(name, args)
	case "/retry":
		if busyRefusal() {
			return nil
		}
		m.offer = ""
		return m.startAgain("↻ Sending the last request again.")
	case "/compact":
		if busyRefusal() {
			return nil
		}
		return m.startCompact(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), name)))
	case "/permissions":
		if len(args) == 1 {
			return m.setMode(args[0])
		}
		return []tea.Cmd{func() tea.Msg {
			lines, err := b.Permissions(ctx, sid)
			return noticeMsg{text: clean(strings.Join(lines, "\n")), err: err}
		}}
	case "/todo":
		if len(m.todos) == 0 {
			m.print(m.th.dim.Render("No task list yet."))
		} else {
			m.print(m.todoList())
		}
	case "/ps":
		return m.psCommand(args)
	case "/add-dir":
		return m.addDirCommand(text)
	case "/init":
		return m.initCommand(text)
	case "/cost":
		m.print(m.costReport())
	case "/reasoning":
		if strings.TrimSpace(m.lastReasoning) == "" {
			m.print(m.th.dim.Render("No reasoning yet."))
			return nil
		}
		full := m.r
		full.fullReasoning = true
		m.print(full.reasoning(m.lastReasoning))
	default:
		if cmds, ok := m.extraCommand(name, text); ok {
			return cmds
		}
		m.print(m.th.warn.Render(fmt.Sprintf("Unknown command %s; /help lists the commands.", clean(name))))
	}
	return nil
}

func resumeCmd(m *Model, id string) tea.Cmd {
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		s, hist, err := b.ResumeSession(ctx, id)
		return sessionMsg{sess: s, history: hist, err: err}
	}
}

// help lists the commands and keys.
func (m *Model) help() string {
	var sb strings.Builder
	sb.WriteString(m.th.bold.Render("Commands") + "\n")
	for _, c := range slashCommands {
		fmt.Fprintf(&sb, "  %-13s %s\n", c.name, strings.TrimSpace(c.args+"  "+m.th.dim.Render(c.help)))
	}
	m.extraHelp(&sb)
	sb.WriteString(m.th.bold.Render("Keys") + "\n")
	sb.WriteString("  Enter send · Shift+Enter or \\ Enter new line · ↑/↓ history · Tab complete\n")
	sb.WriteString("  @path attaches a workspace file to the message (Tab completes the path)\n")
	sb.WriteString("  Shift+Tab cycles the permission mode: default → acceptEdits → plan\n")
	sb.WriteString("  Esc or Ctrl-C cancel the turn · Ctrl-C twice on an empty prompt, or Ctrl-D, exit\n")
	sb.WriteString("  Ctrl-O reasoning in full or collapsed, live and in answers printed from\n")
	sb.WriteString("         then on (printed scrollback is not re-rendered; /reasoning prints\n")
	sb.WriteString("         the last answer's reasoning in full)\n")
	sb.WriteString("  Approvals: y once · s this session · a always · n no · f no, with feedback")
	return sb.String()
}

// todoList renders the model's task list.
func (m *Model) todoList() string {
	if len(m.todos) == 0 {
		return ""
	}
	done := 0
	lines := []string{}
	for _, t := range m.todos {
		box := "☐"
		switch t.Status {
		case protocol.TodoCompleted:
			box = "☑"
			done++
		case protocol.TodoInProgress:
			box = "▶"
		}
		lines = append(lines, "  "+box+" "+oneLine(clean(t.Content), m.width-6))
	}
	head := m.th.bold.Render(fmt.Sprintf("Tasks (%d/%d done)", done, len(m.todos)))
	return head + "\n" + strings.Join(lines, "\n")
}

// costReport describes the session's usage.
func (m *Model) costReport() string {
	cost := "unknown (no price for this model)"
	if m.costKnown {
		cost = fmt.Sprintf("$%.4f in this run of mx-claw", m.cost)
	}
	return fmt.Sprintf("Session %s\n  tokens: %s in, %s out (%s cached)\n  last turn: %s in, %s out\n  context: %.0f%% of the window\n  cost: %s",
		m.sess.ID, tokens(m.total.InputTokens), tokens(m.total.OutputTokens), tokens(m.total.CachedTokens),
		tokens(m.turnUsage.InputTokens), tokens(m.turnUsage.OutputTokens), m.ctxPercent, cost)
}

// showPicker opens the sessions picker.
func (m *Model) showPicker(msg sessionsMsg) []tea.Cmd {
	if msg.err != nil {
		m.print(m.th.fail.Render(clean(msg.err.Error())))
		return nil
	}
	if len(msg.list) == 0 {
		m.print(m.th.dim.Render("No sessions in this workspace yet."))
		return nil
	}
	m.picking, m.picks, m.pick = true, msg.list, 0
	return nil
}

// pickerKey moves in the picker; Enter resumes, Esc closes.
func (m *Model) pickerKey(s string) []tea.Cmd {
	switch s {
	case "up", "k":
		m.pick = max(m.pick-1, 0)
	case "down", "j":
		m.pick = min(m.pick+1, len(m.picks)-1)
	case "esc", "q":
		m.picking = false
	case "enter":
		m.picking = false
		return []tea.Cmd{resumeCmd(m, m.picks[m.pick].ID)}
	}
	return nil
}

// sessionLine describes a session in the picker.
func sessionLine(s protocol.Session) string {
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	return fmt.Sprintf("%s  %s  %d msgs  %s", s.ID, s.UpdatedAt.Local().Format("01-02 15:04"), s.MessageCount, clean(title))
}
