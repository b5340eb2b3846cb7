package store

import (
	"context"
	"sync"
	"time"
)

var _ EventNotifier = (*SQLite)(nil)

// WithPollInterval sets how often SubscribeEvents looks for new events
// (DefaultPollInterval if d <= 0).
func WithPollInterval(d time.Duration) Option {
	return func(s *SQLite) { s.pollEvery = d }
}

// sqliteWatch is the poller behind SubscribeEvents: it runs while anyone
// subscribes.
type sqliteWatch struct {
	once sync.Once
	hub  *NoticeHub
	stop context.CancelFunc
}

// SubscribeEvents returns notices of the events stored by any process
// using the file, found by polling the events table every poll interval
// while someone subscribes.
func (s *SQLite) SubscribeEvents(ctx context.Context) (<-chan EventNotice, error) {
	s.watch.once.Do(func() {
		s.watch.hub = NewNoticeHub(s.startPolling, func() { s.watch.stop() })
	})
	return s.watch.hub.Subscribe(ctx), nil
}

// startPolling starts the poller from the events stored now. It runs under
// the hub's lock.
func (s *SQLite) startPolling() {
	ctx, cancel := context.WithCancel(context.Background())
	s.watch.stop = cancel
	var cursor int64
	_ = s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid), 0) FROM events`).Scan(&cursor)
	every := s.pollEvery
	if every <= 0 {
		every = DefaultPollInterval
	}
	hub := s.watch.hub
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.closed:
				return
			case <-t.C:
			}
			cursor = s.pollEvents(ctx, hub, cursor)
		}
	}()
}

// pollEvents publishes a notice per session with events stored after the
// rowid cursor, and returns the new cursor.
func (s *SQLite) pollEvents(ctx context.Context, hub *NoticeHub, cursor int64) int64 {
	rows, err := s.r.QueryContext(ctx, `SELECT session_id, MAX(sequence), MAX(rowid) FROM events
WHERE rowid > ? GROUP BY session_id`, cursor)
	if err != nil {
		return cursor
	}
	defer rows.Close()
	next := cursor
	for rows.Next() {
		var n EventNotice
		var rowid int64
		if err := rows.Scan(&n.SessionID, &n.Sequence, &rowid); err != nil {
			return cursor
		}
		next = max(next, rowid)
		hub.Publish(n)
	}
	return next
}
