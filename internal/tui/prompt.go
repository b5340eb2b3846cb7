package tui

import (
	"context"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
)

// promptKind is what a prompt asks for.
type promptKind int

const (
	promptSelect promptKind = iota
	promptInput
	promptSecret
	promptConfirm
)

// promptAnswer is the user's answer to a prompt.
type promptAnswer struct {
	text string
	yes  bool
	err  error
}

// promptMsg asks the user something for a /model handler, which waits on
// reply.
type promptMsg struct {
	kind    promptKind
	title   string
	options []modelcmd.Option
	def     string
	defYes  bool
	reply   chan promptAnswer
}

// activePrompt is the prompt shown in the live area.
type activePrompt struct {
	promptMsg
	cursor int
	value  []rune // typed for Input and Secret; never kept anywhere else
}

// uiPrompter implements modelcmd.Prompter on the live area: each question
// goes to the Model through its events channel and the handler waits for
// the answer. Esc answers modelcmd.ErrCancelled.
type uiPrompter struct {
	events chan tea.Msg
}

var _ modelcmd.Prompter = uiPrompter{}

func (p uiPrompter) ask(ctx context.Context, msg promptMsg) (promptAnswer, error) {
	msg.reply = make(chan promptAnswer, 1)
	select {
	case p.events <- msg:
	case <-ctx.Done():
		return promptAnswer{}, ctx.Err()
	}
	select {
	case a := <-msg.reply:
		return a, a.err
	case <-ctx.Done():
		return promptAnswer{}, ctx.Err()
	}
}

// Select shows an inline list: ↑/↓ move, Enter picks, Esc cancels.
func (p uiPrompter) Select(ctx context.Context, title string, options []modelcmd.Option) (string, error) {
	if len(options) == 0 {
		return "", modelcmd.ErrCancelled
	}
	a, err := p.ask(ctx, promptMsg{kind: promptSelect, title: title, options: options})
	return a.text, err
}

// Input asks for one line; an empty answer returns def.
func (p uiPrompter) Input(ctx context.Context, label, def string) (string, error) {
	a, err := p.ask(ctx, promptMsg{kind: promptInput, title: label, def: def})
	if err != nil {
		return "", err
	}
	if v := strings.TrimSpace(a.text); v != "" {
		return v, nil
	}
	return def, nil
}

// Secret asks for one line without showing it.
func (p uiPrompter) Secret(ctx context.Context, label string) (string, error) {
	a, err := p.ask(ctx, promptMsg{kind: promptSecret, title: label})
	return strings.TrimSpace(a.text), err
}

// Confirm asks y/n; Enter alone returns def.
func (p uiPrompter) Confirm(ctx context.Context, question string, def bool) (bool, error) {
	a, err := p.ask(ctx, promptMsg{kind: promptConfirm, title: question, defYes: def})
	return a.yes, err
}

// showPrompt opens a prompt; the list starts on the current option.
func (m *Model) showPrompt(msg promptMsg) {
	if m.prompt != nil {
		// One at a time: the handler asks sequentially, so this is stale.
		m.prompt.reply <- promptAnswer{err: modelcmd.ErrCancelled}
	}
	p := &activePrompt{promptMsg: msg}
	for i, o := range msg.options {
		if o.Current {
			p.cursor = i
		}
	}
	m.prompt = p
}

// closePrompt answers the prompt shown and closes it.
func (m *Model) closePrompt(a promptAnswer) {
	p := m.prompt
	m.prompt = nil
	p.value = nil
	p.reply <- a
}

// promptKey handles a key while a prompt is shown.
func (m *Model) promptKey(k tea.KeyPressMsg) []tea.Cmd {
	p, s := m.prompt, k.String()
	if s == "esc" {
		m.closePrompt(promptAnswer{err: modelcmd.ErrCancelled})
		return nil
	}
	switch p.kind {
	case promptSelect:
		switch s {
		case "up", "k":
			p.cursor = max(p.cursor-1, 0)
		case "down", "j":
			p.cursor = min(p.cursor+1, len(p.options)-1)
		case "enter":
			m.closePrompt(promptAnswer{text: p.options[p.cursor].Value})
		}
	case promptConfirm:
		switch s {
		case "y", "Y":
			m.closePrompt(promptAnswer{yes: true})
		case "n", "N":
			m.closePrompt(promptAnswer{yes: false})
		case "enter":
			m.closePrompt(promptAnswer{yes: p.defYes})
		}
	case promptInput, promptSecret:
		switch s {
		case "enter":
			m.closePrompt(promptAnswer{text: string(p.value)})
		case "backspace", "ctrl+h":
			if n := len(p.value); n > 0 {
				p.value = p.value[:n-1]
			}
		case "ctrl+u":
			p.value = nil
		default:
			if k.Text != "" {
				p.typeText(k.Text)
			}
		}
	}
	return nil
}

// typeText adds typed or pasted text to an Input or Secret prompt, on one
// line.
func (p *activePrompt) typeText(t string) {
	if p.kind != promptInput && p.kind != promptSecret {
		return
	}
	for _, r := range t {
		if r == '\n' || r == '\r' || r < ' ' || r == utf8.RuneError {
			continue
		}
		p.value = append(p.value, r)
	}
}

// promptView renders the prompt shown.
func (m *Model) promptView() []string {
	p := m.prompt
	lines := []string{m.th.bold.Render(oneLine(clean(p.title), m.width))}
	switch p.kind {
	case promptSelect:
		start, n := 0, len(p.options)
		room := max(m.height-6, 3)
		if n > room {
			start = min(max(p.cursor-room/2, 0), n-room)
			n = room
		}
		for i := start; i < start+n; i++ {
			o := p.options[i]
			label := oneLine(clean(o.Label), m.width-4)
			if i == p.cursor {
				lines = append(lines, m.th.accent.Render("› "+label))
			} else {
				lines = append(lines, "  "+label)
			}
		}
		lines = append(lines, m.th.dim.Render("↑/↓ move · Enter choose · Esc cancel"))
	case promptConfirm:
		hint := "[y/N]"
		if p.defYes {
			hint = "[Y/n]"
		}
		lines[0] = m.th.bold.Render(oneLine(clean(p.title)+" "+hint, m.width))
	case promptInput:
		shown := string(p.value)
		if w := m.width - 4; utf8.RuneCountInString(shown) > w && w > 0 {
			r := []rune(shown)
			shown = "…" + string(r[len(r)-w+1:])
		}
		line := "› " + clean(shown) + "▏"
		if len(p.value) == 0 && p.def != "" {
			line += m.th.dim.Render(" " + oneLine(clean(p.def), m.width-6))
		}
		lines = append(lines, line, m.th.dim.Render("Enter accept · Esc cancel"))
	case promptSecret:
		state := "(hidden; nothing typed yet)"
		if len(p.value) > 0 {
			state = "(hidden; typed)"
		}
		lines = append(lines, "› "+m.th.dim.Render(state), m.th.dim.Render("Enter accept · Esc cancel"))
	}
	return lines
}
