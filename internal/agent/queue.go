package agent

import (
	"context"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Queued messages (DESIGN §3, "queued input") wait in the store for the
// turn that is running when they arrive, and are sent when it ends well.
// They belong to that turn: when it is cancelled or fails they are taken
// out of the queue and given back (input.returned) for the user to edit
// and send again, and a new turn first gives back what an earlier process
// left queued. So a queued message is never sent after a message the user
// typed later, nor by another process once its turn is over.

// QueuedInputs returns the session's queued messages, oldest first.
func (c *Core) QueuedInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	return c.opts.Store.QueuedInputs(ctx, sessionID)
}

// RemoveQueued takes one queued message out of the queue and returns it,
// emitting input.removed to sink (which may be nil). It fails with an
// error wrapping store.ErrNotFound once the message was sent.
func (c *Core) RemoveQueued(ctx context.Context, sessionID string, id int64, sink func(protocol.Event)) (protocol.QueuedInput, error) {
	q, err := c.opts.Store.RemoveInput(ctx, sessionID, id)
	if err != nil {
		return q, err
	}
	e := protocol.Event{Type: protocol.EventInputRemoved, SessionID: sessionID, Queued: []protocol.QueuedInput{q}}
	return q, c.emit(ctx, &e, sink)
}

// EditQueued replaces the text of a queued message, keeping its place,
// and emits input.edited to sink (which may be nil). It fails with an
// error wrapping store.ErrNotFound once the message was sent.
func (c *Core) EditQueued(ctx context.Context, sessionID string, id int64, text string, sink func(protocol.Event)) (protocol.QueuedInput, error) {
	q, err := c.opts.Store.EditInput(ctx, sessionID, id, text)
	if err != nil {
		return q, err
	}
	e := protocol.Event{Type: protocol.EventInputEdited, SessionID: sessionID, Queued: []protocol.QueuedInput{q}}
	return q, c.emit(ctx, &e, sink)
}

// returnQueued takes the session's queued messages out of the queue and
// gives them back with input.returned: the turn they waited for will not
// send them. It reads first, so a turn with nothing queued pays no write.
func (t *turn) returnQueued() {
	st := t.core.opts.Store
	if list, err := st.QueuedInputs(t.bg, t.sess.ID); err != nil || len(list) == 0 {
		return
	}
	list, err := st.TakeInputs(t.bg, t.sess.ID)
	if err != nil || len(list) == 0 {
		if err != nil {
			t.core.log.Warn("return queued inputs", "session", t.sess.ID, "err", err)
		}
		return
	}
	text := fmt.Sprintf("%d queued message(s) not sent", len(list))
	if err := t.emit(protocol.Event{Type: protocol.EventInputReturned, Queued: list, Text: text}); err != nil {
		t.core.log.Warn("return queued inputs", "session", t.sess.ID, "err", err)
	}
}
