package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// errNothingQueued ends a turn that was to send the queued messages when
// none is left (the user removed them, or another turn sent them): it
// stored nothing and records nothing.
var errNothingQueued = errors.New("no queued message to send")

// maxQueueReads bounds how often a turn reads the queue again because the
// user changed it while the turn made its message of it.
const maxQueueReads = 5

// sendQueued runs the turn with the session's queued messages, then extra
// if set, as its user message. The queue is read under the lease and the
// messages leave it in the transaction that stores the user message; if
// the user removed or edited one meanwhile, that store is refused
// (store.ErrQueueChanged) and the turn reads the queue again, so what is
// sent is exactly what was queued when it was stored.
func (t *turn) sendQueued(extra string) error {
	title, typed := t.sess.Title, t.typed
	for range maxQueueReads {
		list, err := t.core.opts.Store.QueuedInputs(t.bg, t.sess.ID)
		if err != nil {
			return fmt.Errorf("read queued inputs: %w", err)
		}
		if len(list) == 0 && extra == "" {
			return errNothingQueued
		}
		t.sending = list
		err = t.run(joinQueued(list, extra))
		if !errors.Is(err, store.ErrQueueChanged) || t.user != nil {
			return err
		}
		// Nothing of the message was stored: start it again.
		t.sess.Title, t.typed, t.records, t.sending = title, typed, nil, nil
	}
	return fmt.Errorf("the queued messages kept changing while the turn read them: %w", store.ErrQueueChanged)
}

// joinQueued joins queued messages and a new one as one user message: in
// order, separated by blank lines.
func joinQueued(list []protocol.QueuedInput, extra string) string {
	parts := make([]string, 0, len(list)+1)
	for _, q := range list {
		parts = append(parts, q.Content)
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, "\n\n")
}
