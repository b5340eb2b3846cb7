package store

import (
	"context"
	"sync"
	"time"
)

// EventNotice tells that events of a session were stored, up to
// Sequence. A notice with an empty SessionID means that any session may
// have new events (notices may have been missed: a dropped connection).
type EventNotice struct {
	SessionID string
	Sequence  int64
}

// EventNotifier is a store that tells when events are stored, by this
// process or any other sharing the store: the PostgreSQL store through
// LISTEN/NOTIFY, the SQLite store by polling. A server uses it to wake the
// event streams that follow a session when another process stores its
// events.
type EventNotifier interface {
	// SubscribeEvents returns notices of stored events until ctx ends,
	// when the channel is closed. Notices are hints: a receiver reads the
	// events themselves from the store. A slow receiver loses none, but
	// several notices of one session may reach it as one (the latest).
	SubscribeEvents(ctx context.Context) (<-chan EventNotice, error)
}

// DefaultPollInterval is how often the SQLite store looks for events other
// processes stored, while someone subscribes.
const DefaultPollInterval = 100 * time.Millisecond

// NoticeHub fans notices out to subscribers, coalescing per session what a
// subscriber has not taken yet, so that publishing never blocks. It calls
// start when the first subscriber comes and stop when the last one goes
// (both under its lock, so they never overlap). Stores use it; its zero
// value is not ready: use NewNoticeHub.
type NoticeHub struct {
	start, stop func()

	mu   sync.Mutex
	subs map[*noticeSub]struct{}
}

type noticeSub struct {
	wake chan struct{} // capacity 1
	mu   sync.Mutex
	// pending is the latest sequence per session not delivered yet; all
	// is set when an "any session" notice is pending.
	pending map[string]int64
	all     bool
}

// NewNoticeHub returns a hub; start and stop may be nil.
func NewNoticeHub(start, stop func()) *NoticeHub {
	return &NoticeHub{start: start, stop: stop, subs: make(map[*noticeSub]struct{})}
}

// Subscribe returns a channel of notices until ctx ends.
func (h *NoticeHub) Subscribe(ctx context.Context) <-chan EventNotice {
	s := &noticeSub{wake: make(chan struct{}, 1), pending: make(map[string]int64)}
	h.mu.Lock()
	if len(h.subs) == 0 && h.start != nil {
		h.start()
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	out := make(chan EventNotice)
	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			delete(h.subs, s)
			if len(h.subs) == 0 && h.stop != nil {
				h.stop()
			}
			h.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			for _, n := range s.take() {
				select {
				case out <- n:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// take returns and clears what is pending.
func (s *noticeSub) take() []EventNotice {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []EventNotice
	if s.all {
		out = append(out, EventNotice{})
		s.all = false
	}
	for id, seq := range s.pending {
		out = append(out, EventNotice{SessionID: id, Sequence: seq})
	}
	clear(s.pending)
	return out
}

// Publish hands n to every subscriber without blocking.
func (h *NoticeHub) Publish(n EventNotice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.mu.Lock()
		if n.SessionID == "" {
			s.all = true
		} else if n.Sequence > s.pending[n.SessionID] || n.Sequence == 0 {
			s.pending[n.SessionID] = max(n.Sequence, s.pending[n.SessionID])
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Subscribers reports how many subscribers there are.
func (h *NoticeHub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
