package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ErrNothingToContinue is returned by Continue when the session's last
// turn ended with the model's answer: there is no request to send again.
var ErrNothingToContinue = errors.New("nothing to continue: the model has answered the last message")

// ContinueRequest asks for a turn without a new user message.
type ContinueRequest struct {
	SessionID string
	// Model, if set, switches the session to this model from this turn on.
	Model string
	// MaxIterations overrides the iteration budget of this turn.
	MaxIterations int
	// OnAsk says what happens when a call needs a person's approval.
	OnAsk AskPolicy
	// Budget caps the turn.
	Budget Budget
	// Notice, if set, is told (a warning event) as the turn starts: why
	// it runs, as "resumed on worker X after worker Y stopped".
	Notice string
}

// Continue takes the session's transcript as it is through the loop again,
// without a new user message: after a turn stopped at its iteration budget
// (to let the model go on), or after a turn that failed before the model
// answered (to retry the request, instead of storing the prompt a second
// time). The transcript is repaired as before any request. It refuses, with
// ErrNothingToContinue, a session whose last message is the model's final
// answer, and a session waiting for an approval (answer it instead).
func (c *Core) Continue(ctx context.Context, req ContinueRequest, sink func(protocol.Event)) error {
	sess, err := c.opts.Store.GetSession(ctx, req.SessionID)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrSessionNotFound, req.SessionID)
	}
	if sess.Status == protocol.StatusWaitingForApproval {
		if pending, err := c.opts.Store.PendingApprovals(ctx, sess.ID); err == nil && len(pending) > 0 {
			return fmt.Errorf("session %s waits for approval of %q (request %s); answer it to go on",
				sess.ID, pending[0].Summary, pending[0].ID)
		}
	}
	history, err := c.opts.Store.Messages(ctx, sess.ID, 0)
	if err != nil {
		return fmt.Errorf("load transcript: %w", err)
	}
	if !continuable(history) {
		return ErrNothingToContinue
	}
	setup := turnSetup{sessionID: req.SessionID, model: req.Model, maxIter: req.MaxIterations, onAsk: req.OnAsk, budget: req.Budget}
	if err := c.drive(ctx, setup, sink, func(t *turn) error { return t.again(req.Notice) }); err != nil {
		return err
	}
	return c.runQueued(ctx, setup, sink)
}

// continuable reports whether a transcript ends in something the model
// has not answered yet: a user message or tool results.
func continuable(history []protocol.Message) bool {
	for i := len(history) - 1; i >= 0; i-- {
		switch m := history[i]; m.Role {
		case protocol.RoleSystem:
			continue
		case protocol.RoleAssistant:
			return len(m.ToolCalls) > 0
		default:
			return true
		}
	}
	return false
}

// again runs the loop on the stored transcript as it is, telling notice
// first if set. The transcript is looked at again under the lease: a turn
// of another process that held the session meanwhile (a worker sending
// the queue) may have answered it, and then there is nothing to go on
// with and nothing is recorded (ErrNothingToContinue).
func (t *turn) again(notice string) error {
	t.sess.Model = t.model.ID
	history, err := t.core.opts.Store.Messages(t.bg, t.sess.ID, 0)
	if err != nil {
		return fmt.Errorf("load transcript: %w", err)
	}
	if !continuable(history) {
		return ErrNothingToContinue
	}
	if notice != "" {
		t.tell(protocol.Event{Type: protocol.EventWarning, Text: notice})
	}
	if err := t.loadContext(history); err != nil {
		return err
	}
	t.statusEvent(protocol.StatusRunning, "")
	if err := t.record(nil,
		protocol.Event{Type: protocol.EventSessionUpdated, Status: protocol.StatusRunning},
		protocol.Event{Type: protocol.EventTurnStarted, Model: t.model.ID}); err != nil {
		return err
	}
	t.startView()
	return t.loop()
}
