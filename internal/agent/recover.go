package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// warnQuarantined tells the user, on every turn until `mx-claw doctor
// --repair` resolves them, that records of the session could not be read
// and are left out (the store set them aside: store/quarantine.go).
func (t *turn) warnQuarantined() {
	rows, err := t.core.opts.Store.Quarantined(t.bg, t.sess.ID, false)
	if err != nil || len(rows) == 0 {
		return
	}
	names := make([]string, 0, min(len(rows), 5))
	for _, r := range rows[:min(len(rows), 5)] {
		names = append(names, r.What())
	}
	if len(rows) > 5 {
		names = append(names, fmt.Sprintf("%d more", len(rows)-5))
	}
	t.tell(protocol.Event{Type: protocol.EventWarning, Text: fmt.Sprintf(
		"%d stored record(s) of this session could not be read and are set aside (%s); the model does not see them. "+
			"`mx-claw doctor --repair` reports them and saves them to files.", len(rows), strings.Join(names, ", "))})
}

// InterruptedError is the error recorded for a turn whose process ended,
// or could not record the end (a full disk), while the turn ran.
const InterruptedError = "Turn interrupted: the process running it ended, or could not record how it ended " +
	"(for example, the disk was full), before the turn finished"

// RecoverInterrupted records how the turns of sessions left running ended:
// sessions whose status is running while no live process holds their
// lease (the process was killed, or the disk filled up so it could not
// store the turn's end) get status failed and a turn.failed event, so no
// session stays running for ever. A session a live process holds is left
// alone. It returns the ids of the sessions it recovered.
//
// It holds each lease under an owner of its own, not the Core's: a turn
// this Core starts on the session meanwhile then finds the lease held and
// waits, instead of sharing it and losing it when the recovery lets go.
func (c *Core) RecoverInterrupted(ctx context.Context) ([]string, error) {
	done, err := recoverInterrupted(ctx, c.opts.Store, store.NewOwner(), c.running)
	return recoveredIDs(done), err
}

// Recovered is a session whose interrupted turn RecoverInterrupted
// recorded as failed.
type Recovered struct {
	SessionID string
	// Owner is the lease owner of the process that ran the turn, when its
	// lease was still there to tell ("" otherwise).
	Owner string
}

// Recover is RecoverInterrupted telling also whose turns they were, for
// a server that resumes them (Continue with a notice).
func (c *Core) Recover(ctx context.Context) ([]Recovered, error) {
	return recoverInterrupted(ctx, c.opts.Store, store.NewOwner(), c.running)
}

func recoveredIDs(list []Recovered) []string {
	ids := make([]string, len(list))
	for i, r := range list {
		ids[i] = r.SessionID
	}
	return ids
}

// RecoverInterrupted is Core.RecoverInterrupted for a process that has no
// Core (`mx-claw sessions`): owner names it in the leases it takes.
func RecoverInterrupted(ctx context.Context, st store.Store, owner string) ([]string, error) {
	done, err := recoverInterrupted(ctx, st, owner, func(string) bool { return false })
	return recoveredIDs(done), err
}

func recoverInterrupted(ctx context.Context, st store.Store, owner string, running func(string) bool) ([]Recovered, error) {
	list, err := st.ListSessions(ctx, store.ListOptions{Status: protocol.StatusRunning, WithChildren: true})
	if err != nil {
		return nil, err
	}
	var done []Recovered
	for _, s := range list {
		if running(s.ID) {
			continue
		}
		// The list may be stale: a session another process recovered
		// meanwhile is not locked again (its lease would keep that
		// process from resuming it).
		if cur, err := st.GetSession(ctx, s.ID); err != nil || cur.Status != protocol.StatusRunning {
			continue
		}
		var dead string
		if l, err := st.GetLease(ctx, s.ID); err == nil {
			dead = l.Owner
		}
		ok, err := recoverOne(ctx, st, owner, s.ID)
		if err != nil {
			return done, fmt.Errorf("recover session %s: %w", s.ID, err)
		}
		if ok {
			done = append(done, Recovered{SessionID: s.ID, Owner: dead})
		}
	}
	return done, nil
}

// recoverOne fails one interrupted session's turn, holding its lease while
// it does.
func recoverOne(ctx context.Context, st store.Store, owner, id string) (bool, error) {
	var held *store.LeaseHeldError
	if _, err := st.AcquireLease(ctx, id, owner, store.DefaultLeaseTTL); errors.As(err, &held) {
		return false, nil // a live process runs it
	} else if err != nil {
		return false, err
	}
	defer func() { _ = st.ReleaseLease(context.WithoutCancel(ctx), id, owner) }()
	ctx = store.WithLease(ctx, id, owner)
	sess, err := st.GetSession(ctx, id)
	if err != nil || sess.Status != protocol.StatusRunning {
		return false, err
	}
	if err := recordInterrupted(ctx, st, sess); err != nil {
		return false, err
	}
	return true, nil
}

// recordInterrupted records, under the lease ctx holds, that the session's
// running turn was interrupted: status failed, a turn.failed event, no
// pending approvals left.
func recordInterrupted(ctx context.Context, st store.Store, sess *protocol.Session) error {
	id := sess.ID
	sess.Status, sess.LastError = protocol.StatusFailed, InterruptedError
	evs := []*protocol.Event{
		{Type: protocol.EventSessionUpdated, SessionID: id, Status: protocol.StatusFailed, Error: InterruptedError},
		{Type: protocol.EventTurnFailed, SessionID: id, Error: InterruptedError},
	}
	if err := st.AppendBatch(ctx, id, store.Batch{UpdateSession: sess, Events: evs}); err != nil {
		return err
	}
	_ = st.ClearPendingApprovals(ctx, id)
	return nil
}

// recoverHeld reads the session under the lease ctx holds; a session
// still running then was left so by a process that died mid-turn (no
// turn of this process runs it, and no live process held its lease), and
// its turn is recorded as failed first, as RecoverInterrupted would. It
// returns the session as it is now and whether it recovered it.
func (c *Core) recoverHeld(ctx context.Context, id string) (*protocol.Session, bool, error) {
	st := c.opts.Store
	sess, err := st.GetSession(ctx, id)
	if err != nil || sess.Status != protocol.StatusRunning {
		return sess, false, err
	}
	if err := recordInterrupted(ctx, st, sess); err != nil {
		return nil, false, err
	}
	c.log.Info("recorded the interrupted turn of a process that stopped", "session", id)
	return sess, true, nil
}

// running reports whether this process runs a turn on the session.
func (c *Core) running(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.active[id]
	return ok
}
