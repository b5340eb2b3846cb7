package server

import (
	"time"

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
//     interrupted turns as failed (agent.RecoverInterrupted: it takes the
//     lease first, so only one worker does it), and sends the messages
//     queued behind them. The fencing of the store keeps a frozen worker
//     that wakes up from writing anything more.

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
// frozen process left running, and sends their queued messages.
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
		ids, err := s.app.Core.RecoverInterrupted(s.ctx)
		if err != nil && s.ctx.Err() == nil {
			s.log.Warn("take over interrupted sessions", "err", err)
		}
		for _, id := range ids {
			s.log.Info("took over a session whose worker stopped", "session", id)
			s.sendQueued(id)
		}
	}
}
