package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Several `mx-claw serve` workers may share one store (PostgreSQL): any of
// them serves any session. Two things make that work beyond what one
// server does alone:
//
//   - Event notices: when the store tells of events stored by any process
//     (store.EventNotifier: LISTEN/NOTIFY on PostgreSQL, polling on
//     SQLite), the feed of that session reads them at once, so a stream
//     follows a turn another worker runs without waiting for the next poll.
//   - Takeover: a worker that died (or froze past its lease) leaves its
//     sessions running under a lease nobody renews. Every third of the
//     lease TTL each worker looks for such sessions, records their
//     interrupted turns as failed (agent.Core.Recover: it takes the
//     lease first, so only one worker does it), and resumes them with
//     agent.Core.Continue (unless server.resumeInterrupted is false): the
//     model sees the interrupted calls as interrupted and goes on, and a
//     warning in the session says which worker took over from which. The
//     messages queued behind the turn run after it. The fencing of the
//     store keeps a frozen worker that wakes up from writing anything more.
//   - Stranded messages: a worker may also die between two turns, with
//     messages still queued on an idle session. Each worker sends those
//     whose session no live process holds (the lease rules: a dead
//     process of this host at once; otherwise once no lease is left and
//     the session was not touched for a TTL, so a live process between
//     two turns is left alone). The turn that sends them takes the lease,
//     so only one worker does, and a message leaves the queue only when
//     that turn stores it.

// followNotices wakes the feeds of the sessions the store says have new
// events, until the server shuts down.
func (s *Server) followNotices() {
	n, ok := s.app.Store.(store.EventNotifier)
	if !ok {
		return
	}
	ch, err := n.SubscribeEvents(s.ctx)
	if err != nil {
		s.log.Warn("subscribe to event notices", "err", err)
		return
	}
	for notice := range ch {
		if notice.SessionID == "" {
			s.feeds.pollAll(s.ctx)
			continue
		}
		f := s.feeds.get(notice.SessionID)
		if f == nil {
			continue
		}
		f.mu.Lock()
		seen := notice.Sequence > 0 && notice.Sequence <= f.last
		f.mu.Unlock()
		if !seen {
			s.feeds.pollOne(s.ctx, f)
		}
	}
}

// takeOver recovers, every third of the lease TTL, the sessions a dead or
// frozen process left running and resumes them, and sends the messages
// such a process left queued.
func (s *Server) takeOver() {
	ttl := s.app.Config.LeaseDuration()
	if ttl <= 0 {
		ttl = store.DefaultLeaseTTL
	}
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.takeOverOnce(ttl)
	}
}

// takeOverOnce is one round of takeOver.
func (s *Server) takeOverOnce(ttl time.Duration) {
	done, err := s.app.Core.Recover(s.ctx)
	if err != nil && s.ctx.Err() == nil {
		s.log.Warn("take over interrupted sessions", "err", err)
	}
	for _, r := range done {
		s.log.Info("took over a session whose worker stopped", "session", r.SessionID, "worker", r.Owner)
		if s.app.Config.ResumeInterrupted() {
			s.resume(r)
		} else {
			s.sendQueued(r.SessionID)
		}
	}
	s.sendStranded(ttl)
}

// resume goes on with a turn another process left interrupted
// (agent.Core.Continue, with the server's approval policy and budgets),
// then sends what is queued. A transcript the model had answered already
// has nothing to go on with: only the queue is sent.
func (s *Server) resume(rec agent.Recovered) {
	id := rec.SessionID
	r := s.runner(id)
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return
	}
	model := r.model
	r.model = ""
	r.running = true
	r.mu.Unlock()
	s.startQueued(id, r, s.resumeBody(rec, model))
}

// resumeBody is the turn that resumes rec's interrupted turn with model
// ("" for the session's), or, when the model had answered already, sends
// what is queued.
func (s *Server) resumeBody(rec agent.Recovered, model string) turnBody {
	id := rec.SessionID
	before := "the worker running it"
	if rec.Owner != "" {
		before = "worker " + rec.Owner
	}
	notice := fmt.Sprintf("Turn resumed on worker %s after %s stopped", s.app.Core.Owner(), before)
	return func(ctx context.Context, sink func(protocol.Event)) error {
		for try := 0; ; try++ {
			err := s.app.Core.Continue(ctx, agent.ContinueRequest{SessionID: id, Model: model, OnAsk: agent.AskWait,
				Budget: s.app.Budget(), Notice: notice}, sink)
			if errors.Is(err, agent.ErrNothingToContinue) {
				return s.runTurn(id, "", model)(ctx, sink)
			}
			// Another worker's takeover round may hold the lease for a
			// moment to look at the session it just saw running: wait
			// for it. A turn of its own runs longer; then the queue is
			// watched, and sent when it ends.
			var held *store.LeaseHeldError
			if !errors.As(err, &held) || try >= resumeTries {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(resumeWait):
			}
		}
	}
}

// resumeTries and resumeWait bound how long resume waits for a lease
// another worker's takeover round holds.
const (
	resumeTries = 20
	resumeWait  = 100 * time.Millisecond
)

// sendStranded sends the queued messages of idle sessions that no live
// process holds: their process died between two turns, or while a turn
// that was recovered without them ran (see the package comment).
func (s *Server) sendStranded(ttl time.Duration) {
	ids, err := s.app.Store.QueuedSessions(s.ctx)
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Warn("look for queued messages", "err", err)
		}
		return
	}
	for _, id := range ids {
		if s.stranded(id, ttl) {
			s.log.Info("sending messages a stopped process left queued", "session", id)
			s.sendQueued(id)
		}
	}
}

// stranded reports whether the queued messages of a session wait for no
// live process.
func (s *Server) stranded(id string, ttl time.Duration) bool {
	sess, err := s.app.Store.GetSession(s.ctx, id)
	if err != nil {
		return false
	}
	switch sess.Status {
	case protocol.StatusRunning, protocol.StatusWaitingForApproval:
		return false // recovered first, or waiting for an answer
	}
	l, err := s.app.Store.GetLease(s.ctx, id)
	switch {
	case err == nil:
		return l.Owner != s.app.Core.Owner() && store.OwnerGone(l.Owner)
	case !errors.Is(err, store.ErrNotFound):
		return false
	}
	return time.Since(sess.UpdatedAt) >= ttl
}
