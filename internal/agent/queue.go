package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Queued messages (DESIGN §3, "queued input") wait in the store for the
// turn that is running when they arrive, and are sent when it ends well.
// A message leaves the queue only in the transaction that stores it as
// the next turn's user message, or as given back (store.Batch.Dequeue):
// a process that dies in between leaves it queued, never lost.
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
// gives them back with input.returned, in one transaction: the turn they
// waited for will not send them. It reads first, so a turn with nothing
// queued pays no write.
func (t *turn) returnQueued() {
	st := t.core.opts.Store
	for range maxQueueReads {
		list, err := st.QueuedInputs(t.bg, t.sess.ID)
		if err != nil || len(list) == 0 {
			if err != nil {
				t.core.log.Warn("return queued inputs", "session", t.sess.ID, "err", err)
			}
			return
		}
		text := fmt.Sprintf("%d queued message(s) not sent", len(list))
		err = t.recordDequeue(nil, nil, list, protocol.Event{Type: protocol.EventInputReturned, Queued: list, Text: text})
		if !errors.Is(err, store.ErrQueueChanged) {
			if err != nil {
				t.core.log.Warn("return queued inputs", "session", t.sess.ID, "err", err)
			}
			return
		}
	}
}
