package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// An approval a turn waits for (AskWait) may be answered from anywhere:
// the front end of the process that asked (the REPL's prompt), a server
// in another process (the web panel, the API), `mx-claw approve`, an
// editor. Every answer is stored first (store.ResolveApproval, which only
// the first answer passes), and the waiting turn takes the stored one: at
// once when it was given in its own process (Answer wakes it), within
// ApprovalPoll when it was given in another. So there is exactly one
// outcome, whoever answers, and the turn goes on in the process that
// asked, where its prompt closes and says who answered.

// DefaultApprovalPoll is how often a turn waiting for an approval reads
// the store for an answer given in another process.
const DefaultApprovalPoll = 250 * time.Millisecond

// AnsweredElsewhere is the AnsweredBy of an answer given in another
// process that did not say who it was.
const AnsweredElsewhere = "another process"

// ErrApprovalCancelled ends a turn whose pending approval was cancelled
// while it waited (the session was recovered or repaired meanwhile).
var ErrApprovalCancelled = errors.New("the approval was cancelled")

// waitAnswer waits for the answer to approval a: woken by Answer in this
// process, or reading the store every ApprovalPoll for one given in
// another. It returns the stored answer.
func (t *turn) waitAnswer(a *protocol.Approval, wake <-chan struct{}) (ResolveRequest, error) {
	tick := time.NewTicker(t.core.opts.ApprovalPoll)
	defer tick.Stop()
	for {
		select {
		case <-wake:
		case <-tick.C:
		case <-t.ctx.Done():
			return ResolveRequest{}, t.ctx.Err()
		}
		got, err := t.core.opts.Store.GetApproval(t.bg, t.sess.ID, a.ID)
		if err != nil {
			t.core.log.Warn("read approval", "session", t.sess.ID, "approval", a.ID, "err", err)
			continue
		}
		switch got.Status {
		case protocol.ApprovalApproved, protocol.ApprovalRejected:
			return ResolveRequest{SessionID: got.SessionID, RequestID: got.ID, Approve: got.Status == protocol.ApprovalApproved,
				Scope: got.Scope, Rule: got.Rule, Feedback: got.Feedback, By: got.AnsweredBy}, nil
		case protocol.ApprovalCancelled:
			return ResolveRequest{}, fmt.Errorf("%w: %s", ErrApprovalCancelled, a.ID)
		}
	}
}

// resolution is the stored form of an answer.
func resolution(req ResolveRequest) store.Resolution {
	status := protocol.ApprovalRejected
	if req.Approve {
		status = protocol.ApprovalApproved
	}
	return store.Resolution{Status: status, Feedback: req.Feedback, Scope: req.Scope, Rule: req.Rule, By: req.By}
}

// WaitsElsewhere reports whether a turn of another process waits for the
// answer to approval a in that process (the REPL, or another server):
// the approval names it as its waiter and it still holds the session's
// lease. Such an approval is answered by storing the answer (Answer), not
// by resuming the turn here.
func (c *Core) WaitsElsewhere(ctx context.Context, a protocol.Approval) bool {
	if a.Waiter == "" || a.Waiter == c.opts.Owner || store.OwnerGone(a.Waiter) {
		return false
	}
	l, err := c.opts.Store.GetLease(ctx, a.SessionID)
	return err == nil && l.Owner == a.Waiter && l.ExpiresAt.After(c.opts.Now())
}

// pendingApproval returns the pending approval req answers.
func (c *Core) pendingApproval(ctx context.Context, req ResolveRequest) (*protocol.Approval, error) {
	pending, err := c.opts.Store.PendingApprovals(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	for i := range pending {
		if pending[i].ID == req.RequestID {
			return &pending[i], nil
		}
	}
	if _, err := c.opts.Store.GetSession(ctx, req.SessionID); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrSessionNotFound, req.SessionID)
	}
	return nil, fmt.Errorf("%w: %s in session %s", ErrNoPendingApproval, req.RequestID, req.SessionID)
}
