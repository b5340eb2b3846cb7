package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Messages typed while a turn runs are queued in the store and shown
// above the input box. They are sent when the turn ends well; when it is
// cancelled or fails the core gives them back (input.returned) and they
// return to the input box. ↑ on an empty input box takes the last one
// back out of the queue to edit or delete.

// queuedItem is a queued message: its id in the store and its text as the
// user typed it (before @path attachments were expanded).
type queuedItem struct {
	id   int64
	text string
}

type (
	// queuedMsg says a message typed while busy was queued (or not).
	queuedMsg struct {
		item queuedItem
		err  error
	}
	// dequeuedMsg says a queued message was taken back for editing.
	dequeuedMsg struct {
		item queuedItem
		err  error
	}
)

// enqueue queues text (sent as send, its attachments expanded).
func (m *Model) enqueue(text, send string) tea.Cmd {
	b, ctx, sid := m.backend, m.ctx, m.sess.ID
	return func() tea.Msg {
		q, err := b.Enqueue(ctx, sid, send)
		return queuedMsg{item: queuedItem{id: q.ID, text: text}, err: err}
	}
}

// queuedDone shows a message as queued. If the turn ended meanwhile, the
// message is sent now when the turn ended well, else it goes back to the
// input box: it must not wait for a turn that is over.
func (m *Model) queuedDone(msg queuedMsg) []tea.Cmd {
	if msg.err != nil {
		m.print(m.th.fail.Render("Could not queue the message: " + clean(msg.err.Error())))
		m.restoreInput(msg.item.text)
		return nil
	}
	m.queued = append(m.queued, msg.item)
	if m.busy {
		return nil
	}
	if !m.turnFailed {
		m.printQueuedAsSent()
		return m.startTurn("")
	}
	return []tea.Cmd{m.dequeue(m.queued[len(m.queued)-1])}
}

// editQueued takes the last queued message back into the input box.
func (m *Model) editQueued() []tea.Cmd {
	q := m.queued[len(m.queued)-1]
	return []tea.Cmd{m.dequeue(q)}
}

// dequeue removes a queued message from the store.
func (m *Model) dequeue(q queuedItem) tea.Cmd {
	b, ctx, sid := m.backend, m.ctx, m.sess.ID
	return func() tea.Msg {
		_, err := b.RemoveQueued(ctx, sid, q.id)
		return dequeuedMsg{item: q, err: err}
	}
}

// dequeued puts a message taken out of the queue into the input box; if
// it was sent meanwhile, it says so.
func (m *Model) dequeued(msg dequeuedMsg) {
	if !m.dropQueued(msg.item.id) {
		return // given back or sent meanwhile
	}
	if msg.err != nil {
		m.print(m.th.dim.Render("That message was sent already."))
		return
	}
	m.restoreInput(msg.item.text)
}

// dropQueued forgets a queued message; false if it was not shown.
func (m *Model) dropQueued(id int64) bool {
	for i, q := range m.queued {
		if q.id == id {
			m.queued = append(m.queued[:i], m.queued[i+1:]...)
			return true
		}
	}
	return false
}

// inputReturned puts the messages the core gave back into the input box,
// in the order they were typed, before what is typed there now.
func (m *Model) inputReturned(ev protocol.Event) {
	var texts []string
	for _, q := range ev.Queued {
		text := q.Content
		for _, mine := range m.queued {
			if mine.id == q.ID {
				text = mine.text // as typed, mentions not expanded
			}
		}
		m.dropQueued(q.ID)
		texts = append(texts, collapseAttachments(text))
	}
	if len(texts) == 0 {
		return
	}
	m.restoreInput(texts...)
	n := "message was"
	if len(texts) > 1 {
		n = fmt.Sprintf("%d messages were", len(texts))
	}
	m.print(m.th.dim.Render("The queued " + n + " not sent; it is back in the input box."))
}

// queueChanged follows another client's edit or removal of a queued
// message.
func (m *Model) queueChanged(ev protocol.Event) {
	for _, q := range ev.Queued {
		if ev.Type == protocol.EventInputRemoved {
			m.dropQueued(q.ID)
			continue
		}
		for i := range m.queued {
			if m.queued[i].id == q.ID {
				m.queued[i].text = collapseAttachments(q.Content)
			}
		}
	}
}

// restoreInput puts texts into the input box, before what it holds.
func (m *Model) restoreInput(texts ...string) {
	if cur := m.input.Value(); strings.TrimSpace(cur) != "" {
		texts = append(texts, cur)
	}
	m.input.SetValue(strings.Join(texts, "\n\n"))
}

// printQueuedAsSent prints the queued messages as sent and forgets them.
func (m *Model) printQueuedAsSent() {
	for _, q := range m.queued {
		m.print(m.r.user(q.text))
	}
	m.queued = nil
}

// queuedView shows the queued messages, the last with its key.
func (m *Model) queuedView() []string {
	var out []string
	for i, q := range m.queued {
		line := "⏸ queued: " + clean(q.text)
		if i == len(m.queued)-1 {
			hint := "  (↑ edit)"
			line = oneLine(line, m.width-len(hint)) + hint
		}
		out = append(out, m.th.dim.Render(oneLine(line, m.width)))
	}
	return out
}
