package tui

import (
	"strings"

	"github.com/mx-claw/mx-claw/internal/mdterm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The answer is rendered as it streams: each time a line ends, the
// top-level Markdown blocks that more text cannot change any more
// (mdterm.StableEnd) are rendered and printed to the scrollback, once;
// only the block still open is shown in the live area, raw. What is
// printed is never drawn again, so a resize mid-stream cannot repeat it,
// and the live area stays small however long the answer grows.

// streamDelta adds a piece of the answer and prints what became stable.
func (m *Model) streamDelta(text string) {
	m.stream.WriteString(text)
	if strings.IndexByte(text, '\n') < 0 {
		return
	}
	open := m.stream.String()[m.printedTo:]
	n := mdterm.StableEnd(open)
	if n == 0 || strings.TrimSpace(open[:n]) == "" {
		return
	}
	m.printAnswerStart()
	m.printAnswerPart(open[:n])
	m.printedTo += n
}

// printAnswerStart prints the reasoning before the first part of the
// answer.
func (m *Model) printAnswerStart() {
	if m.printedTo > 0 || m.answerStarted {
		return
	}
	m.answerStarted = true
	if r := m.reasoning.String(); strings.TrimSpace(r) != "" {
		m.lastReasoning = r
		m.print(m.r.reasoning(r))
		m.reasoning.Reset()
	}
}

// printAnswerPart prints part of the answer rendered, a blank line
// between it and the part before.
func (m *Model) printAnswerPart(md string) {
	out := m.r.markdown(md)
	if strings.TrimSpace(out) == "" {
		return
	}
	if m.partsPrinted > 0 {
		out = "\n" + out
	}
	m.partsPrinted++
	m.print(out)
}

// completeAnswer prints the end of a finished answer: all of it if
// nothing was printed while it streamed, else the rest.
func (m *Model) completeAnswer(ev protocol.Event) {
	reasoning := m.reasoning.String()
	text := ev.Text
	if ev.Message != nil {
		if ev.Message.Reasoning != "" && !m.answerStarted {
			reasoning = ev.Message.Reasoning
		}
		if text == "" {
			text = ev.Message.Content
		}
	}
	if text == "" {
		text = m.stream.String()
	}
	if !m.answerStarted {
		if strings.TrimSpace(reasoning) != "" {
			m.lastReasoning = reasoning
		}
		m.print(m.r.reasoning(reasoning))
	}
	done := m.stream.String()[:m.printedTo]
	rest := text
	if m.printedTo > 0 && strings.HasPrefix(text, done) {
		rest = text[m.printedTo:]
	}
	if strings.TrimSpace(rest) != "" {
		m.printAnswerPart(rest)
	}
	m.resetStream()
}

// cutAnswer prints what streamed of an answer that did not finish, raw.
func (m *Model) cutAnswer() {
	if s := strings.TrimSpace(m.reasoning.String()); s != "" && !m.answerStarted {
		m.lastReasoning = s
		m.print(m.r.reasoning(s))
	}
	if s := m.stream.String()[m.printedTo:]; strings.TrimSpace(s) != "" {
		m.print(m.r.wrap(clean(s)))
	}
	m.resetStream()
}

// restartAnswer drops what streamed of an answer that is being asked for
// again; what was printed of it stays, with a note.
func (m *Model) restartAnswer() {
	if m.partsPrinted > 0 {
		m.print(m.th.dim.Render("  (the answer above was cut off; it starts again)"))
	}
	m.resetStream()
}

// resetStream forgets the answer streaming in.
func (m *Model) resetStream() {
	m.stream.Reset()
	m.reasoning.Reset()
	m.printedTo, m.partsPrinted, m.answerStarted = 0, 0, false
}
