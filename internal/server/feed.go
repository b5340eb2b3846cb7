package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mx-claw/mx-claw/internal/bus"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
	"github.com/mx-claw/mx-claw/internal/store"
)

// pollBatch is how many events one store read of a feed returns at most.
const pollBatch = 512

// feeds holds one feed per session that has an event stream open.
type feeds struct {
	store  store.Store
	buffer int
	log    *slog.Logger

	mu sync.Mutex
	m  map[string]*feed

	// resyncs counts the streams that fell behind, were dropped by their
	// feed's broker and caught up from the store.
	resyncs atomic.Int64
}

// feed is the live events of one session, in order: the stored ones
// strictly by sequence (published once each, gaps filled from the store),
// the deltas of this process's turns among them where they happened.
type feed struct {
	id     string
	broker *bus.Broker[*item]
	refs   int // open streams; guarded by feeds.mu

	mu sync.Mutex
	// last is the sequence of the last stored event published.
	last int64
	// turn is the turn whose deltas may go out as they come: the feed
	// published its turn.started, or read the store for it once.
	turn string
	// children is the last stored sequence of each subagent's session
	// published here (nested.go).
	children map[string]int64
}

func newFeeds(st store.Store, buffer int, log *slog.Logger) *feeds {
	return &feeds{store: st, buffer: buffer, log: log, m: make(map[string]*feed)}
}

// subscribe opens a stream's subscription to a session's feed. from is
// the last stored sequence the stream has read from the store; a new feed
// starts there. It returns the subscription, the sequence of the last
// stored event the feed published before it (the subscription gets the
// ones after), and the function that ends the subscription.
func (fs *feeds) subscribe(sessionID string, from int64) (*bus.Subscription[*item], int64, func()) {
	fs.mu.Lock()
	f, ok := fs.m[sessionID]
	if !ok {
		f = &feed{id: sessionID, broker: bus.New[*item](fs.buffer), last: from}
		fs.m[sessionID] = f
	}
	f.refs++
	fs.mu.Unlock()

	f.mu.Lock()
	sub := f.broker.Subscribe()
	last := f.last
	f.mu.Unlock()
	var once sync.Once
	release := func() {
		once.Do(func() {
			sub.Close()
			fs.mu.Lock()
			defer fs.mu.Unlock()
			f.refs--
			if f.refs == 0 && fs.m[sessionID] == f {
				delete(fs.m, sessionID)
			}
		})
	}
	return sub, last, release
}

// get returns the session's feed, or nil if no stream follows it.
func (fs *feeds) get(sessionID string) *feed {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.m[sessionID]
}

// publish hands an event of a turn this process runs to the session's
// feed, if a stream follows the session. A stored event already published
// (the poller was faster) is skipped; one beyond the next sequence is
// preceded by the ones in between, read from the store.
func (fs *feeds) publish(ctx context.Context, e protocol.Event) {
	if e.ParentSessionID != "" {
		fs.publishNested(e)
	}
	f := fs.get(e.SessionID)
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !stored(e) {
		if e.TurnID != "" && e.TurnID != f.turn {
			// The first delta of a turn the feed has not seen start: the
			// feed began after the turn stored its start (a stream that
			// subscribed just then). A client must never get a turn's
			// deltas before its turn.started, so what is stored goes
			// first. Once per turn: a resumed turn's start is older.
			fs.fill(ctx, f, math.MaxInt64)
			f.turn = e.TurnID
		}
		f.broker.Publish(&item{ev: e})
		return
	}
	if e.Sequence <= f.last {
		return
	}
	if e.Sequence > f.last+1 {
		fs.fill(ctx, f, e.Sequence-1)
	}
	if e.Sequence == f.last+1 {
		f.put(e)
	}
}

// fill publishes the stored events after f.last up to upTo, from the
// store. f.mu is held.
func (fs *feeds) fill(ctx context.Context, f *feed, upTo int64) {
	for f.last < upTo {
		evs, err := fs.store.Events(ctx, f.id, f.last, int(min(upTo-f.last, pollBatch)))
		if err != nil {
			fs.log.Warn("read events", "session", f.id, "err", err)
			return
		}
		if len(evs) == 0 {
			return
		}
		for _, e := range evs {
			if e.Sequence != f.last+1 {
				return
			}
			f.put(e)
		}
	}
}

// pollAll publishes the events stored since the last poll (by any
// process) of every followed session.
func (fs *feeds) pollAll(ctx context.Context) {
	fs.mu.Lock()
	list := make([]*feed, 0, len(fs.m))
	for _, f := range fs.m {
		list = append(list, f)
	}
	fs.mu.Unlock()
	for _, f := range list {
		fs.pollOne(ctx, f)
		fs.pollChildren(ctx, f)
	}
}

// pollOne reads the store outside the feed's lock, so a turn publishing
// meanwhile never waits for the read, then publishes what is still new.
func (fs *feeds) pollOne(ctx context.Context, f *feed) {
	for {
		f.mu.Lock()
		after := f.last
		f.mu.Unlock()
		evs, err := fs.store.Events(ctx, f.id, after, pollBatch)
		if err != nil {
			if ctx.Err() == nil {
				fs.log.Warn("poll events", "session", f.id, "err", err)
			}
			return
		}
		f.mu.Lock()
		for _, e := range evs {
			if e.Sequence <= f.last {
				continue
			}
			if e.Sequence != f.last+1 {
				break
			}
			f.put(e)
		}
		f.mu.Unlock()
		if len(evs) < pollBatch {
			return
		}
	}
}

// put publishes the stored event that follows f.last. f.mu is held.
func (f *feed) put(e protocol.Event) {
	f.broker.Publish(&item{ev: e})
	f.last = e.Sequence
	if e.Type == protocol.EventTurnStarted {
		f.turn = e.TurnID
	}
}

// closeAll closes every feed's subscriptions.
func (fs *feeds) closeAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.m {
		f.broker.Close()
	}
}

// item is one event on a feed. Its SSE frame is encoded once, by the
// first stream that sends it, for all of them: a hundred streams cost one
// JSON encoding per event, not a hundred, and the turn that published it
// pays none.
type item struct {
	ev protocol.Event
	// nested marks a subagent's event on its parent's feed (nested.go):
	// sent without an id, like a delta.
	nested bool
	once   sync.Once
	frame  []byte
	err    error
}

// encoded returns the item's frame: with the event's sequence as its id
// if it is stored, without one if it is a delta.
func (it *item) encoded() ([]byte, error) {
	it.once.Do(func() { it.frame, it.err = encodeFrame(it.ev, it.stored()) })
	return it.frame, it.err
}

// stored reports whether the item is one of the feed's session's stored
// events (sent with its sequence as the id).
func (it *item) stored() bool { return !it.nested && stored(it.ev) }

// encodeFrame encodes one event as an SSE frame.
func encodeFrame(e protocol.Event, withID bool) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	id := ""
	if withID {
		id = strconv.FormatInt(e.Sequence, 10)
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(e.Type) + 40)
	if err := sse.NewWriter(&b).Event(id, string(e.Type), data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// stored reports whether e is a stored session event (it has a sequence);
// the stream's own events (stream.*) and deltas are not.
func stored(e protocol.Event) bool {
	return e.Sequence > 0 && e.Type.Stored() && !strings.HasPrefix(string(e.Type), "stream.")
}
