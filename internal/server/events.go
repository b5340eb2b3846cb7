package server

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/bus"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
	"github.com/mx-claw/mx-claw/internal/store"
)

// retryDelay is what the stream tells the browser to wait before it
// reconnects.
const retryDelay = 2 * time.Second

// errClientGone ends a stream whose client went away or stopped reading.
var errClientGone = errors.New("client gone")

// stream is one open event stream: what it sent so far.
type stream struct {
	s   *Server
	r   *http.Request
	rc  *http.ResponseController
	out http.ResponseWriter
	id  string
	// batch holds the frames written since the last flush.
	batch []byte
	// sent is the sequence of the last stored event sent.
	sent int64
	// pos is the feed's position: the last stored event seen on it.
	pos int64
	// pending says frames were written since the last flush.
	pending bool
}

// events serves GET /api/sessions/{id}/events (see the package doc).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	after, err := resumeFrom(r)
	if err != nil {
		return err
	}
	if _, err := s.app.Store.GetSession(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound(id)
		}
		return err
	}
	if after > 0 {
		// An id this session never had (a client of another database)
		// would silence every event up to it: refuse it instead.
		evs, err := s.app.Store.Events(r.Context(), id, after-1, 1)
		if err != nil {
			return err
		}
		if len(evs) == 0 || evs[0].Sequence != after {
			return badRequest("session %s has no event %d; reconnect without Last-Event-ID (or with ?after=0)", id, after)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{s: s, r: r, rc: http.NewResponseController(w), out: w, id: id, sent: after}
	if err := st.run(); err != nil && !errors.Is(err, errClientGone) {
		s.log.Warn("event stream", "session", id, "err", err)
	}
	return nil
}

// resumeFrom returns the sequence a stream resumes after: Last-Event-ID
// (sent by a reconnecting EventSource), else ?after=N, else 0.
func resumeFrom(r *http.Request) (int64, error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("%s %q is not an event sequence (a number from 0)", what, v)
	}
	return n, nil
}

// run replays, says ready, then follows the session until the client
// goes or the server closes. A subscription the broker dropped (the
// client fell behind) is replaced by a new one after catching up from the
// store, without the client noticing.
func (st *stream) run() error {
	var retry bytes.Buffer
	sse.NewWriter(&retry).Retry(retryDelay)
	if err := st.write(retry.Bytes()); err != nil {
		return err
	}
	if err := st.replay(0); err != nil {
		return err
	}
	sess, err := st.s.app.Store.GetSession(st.r.Context(), st.id)
	if err != nil {
		return err
	}
	if err := st.send(protocol.Event{Type: protocol.EventStreamReady, SessionID: st.id, Sequence: st.sent,
		Timestamp: time.Now().UTC(), Session: sess}, false); err != nil {
		return err
	}
	if err := st.flush(); err != nil {
		return err
	}
	for {
		sub, last, release := st.s.feeds.subscribe(st.id, st.sent)
		err := st.follow(sub, last)
		release()
		if err != nil || !sub.Dropped() {
			return err
		}
		st.s.feeds.resyncs.Add(1)
	}
}

// replay sends the stored events after st.sent, up to upTo (0: all).
func (st *stream) replay(upTo int64) error {
	ctx := st.r.Context()
	for upTo == 0 || st.sent < upTo {
		limit := pollBatch
		if upTo > 0 {
			limit = int(min(upTo-st.sent, pollBatch))
		}
		evs, err := st.s.app.Store.Events(ctx, st.id, st.sent, limit)
		if err != nil {
			if ctx.Err() != nil {
				return errClientGone
			}
			return err
		}
		for _, e := range evs {
			if err := st.send(e, true); err != nil {
				return err
			}
		}
		if len(evs) < limit {
			break
		}
	}
	return nil
}

// follow sends the feed's events until the subscription ends (dropped or
// closed), the client goes or the server closes. last is the feed's
// position when the subscription began.
//
// It works in batches: woken by an event, it sends every event the feed
// has, flushes once, then rests for FlushDelay without listening, so the
// events of a burst queue up in its buffer instead of waking it (and
// costing a write) one by one. A turn streaming deltas to a hundred
// streams then wakes each of them a few hundred times a second at most,
// not once per delta.
func (st *stream) follow(sub *bus.Subscription[*item], last int64) error {
	// Events the feed published before this subscription.
	if last > st.sent {
		if err := st.replay(last); err != nil {
			return err
		}
	}
	st.pos = last
	// A heartbeat goes out at each tick after which nothing else was sent.
	beat := time.NewTicker(st.s.opts.HeartbeatInterval)
	defer beat.Stop()
	quiet := true
	rest := time.NewTimer(time.Hour)
	rest.Stop()
	defer rest.Stop()
	for {
		select {
		case it, ok := <-sub.C():
			if !ok {
				return st.ended(sub)
			}
			if err := st.handle(it); err != nil {
				return err
			}
			// Everything else the feed has now, in the same write.
			for more := true; more; {
				select {
				case it, ok := <-sub.C():
					if !ok {
						if err := st.flush(); err != nil {
							return err
						}
						return st.ended(sub)
					}
					if err := st.handle(it); err != nil {
						return err
					}
				default:
					more = false
				}
			}
			quiet = false
			if st.pending {
				if err := st.flush(); err != nil {
					return err
				}
			}
			if d := st.s.opts.FlushDelay; d > 0 {
				rest.Reset(d)
				select {
				case <-rest.C:
				case <-st.s.closing:
					rest.Stop()
					return st.close(sub)
				case <-st.r.Context().Done():
					return errClientGone
				}
			}
		case <-beat.C:
			if quiet {
				if err := st.send(protocol.Event{Type: protocol.EventStreamHeartbeat, SessionID: st.id,
					Sequence: st.sent, Timestamp: time.Now().UTC()}, false); err != nil {
					return err
				}
				if err := st.flush(); err != nil {
					return err
				}
			}
			quiet = true
		case <-st.s.closing:
			return st.close(sub)
		case <-st.r.Context().Done():
			return errClientGone
		}
	}
}

// handle sends one event of the feed, if the client has not got it: a
// stored event after the last one sent (the ones between read from the
// store, should there be a gap), or a delta that happened after it.
func (st *stream) handle(it *item) error {
	e := it.ev
	if !it.stored() {
		// A delta belongs after the stored event before it on the feed;
		// one from before what the client already has is stale.
		if st.pos < st.sent {
			return nil
		}
		return st.sendItem(it)
	}
	st.pos = e.Sequence
	if e.Sequence <= st.sent {
		return nil
	}
	if e.Sequence > st.sent+1 {
		if err := st.replay(e.Sequence - 1); err != nil {
			return err
		}
	}
	return st.sendItem(it)
}

// ended handles the end of a subscription: a dropped one is replaced by
// the caller; one closed with the server ends the stream.
func (st *stream) ended(sub *bus.Subscription[*item]) error {
	if sub.Dropped() {
		return nil
	}
	return st.closing()
}

// close ends the stream when the server closes: the feed had every stored
// event before closing was closed, so what is buffered is sent, then the
// last word.
func (st *stream) close(sub *bus.Subscription[*item]) error {
	if err := st.drain(sub); err != nil {
		return err
	}
	return st.closing()
}

// drain sends the events already buffered in sub, without waiting.
func (st *stream) drain(sub *bus.Subscription[*item]) error {
	for {
		select {
		case it, ok := <-sub.C():
			if !ok {
				return nil
			}
			if err := st.handle(it); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// closing sends the stream's last event.
func (st *stream) closing() error {
	if err := st.send(protocol.Event{Type: protocol.EventStreamClosing, SessionID: st.id, Sequence: st.sent,
		Timestamp: time.Now().UTC(), Text: "the server is shutting down"}, false); err != nil {
		return err
	}
	return st.flush()
}

// send writes one event: with its sequence as the id if it is stored.
func (st *stream) send(e protocol.Event, withID bool) error {
	frame, err := encodeFrame(e, withID)
	if err != nil {
		return err
	}
	if withID {
		st.sent = e.Sequence
	}
	return st.write(frame)
}

// sendItem writes an event of the feed, encoded once for all streams.
func (st *stream) sendItem(it *item) error {
	frame, err := it.encoded()
	if err != nil {
		return err
	}
	if it.stored() {
		st.sent = it.ev.Sequence
	}
	return st.write(frame)
}

// maxBatch is how many bytes of frames a stream gathers before it writes
// them, flush or not.
const maxBatch = 64 << 10

// write adds a frame to the batch the next flush writes, in one call.
func (st *stream) write(frame []byte) error {
	st.batch = append(st.batch, frame...)
	st.pending = true
	if len(st.batch) >= maxBatch {
		return st.writeBatch()
	}
	return nil
}

// writeBatch writes the gathered frames.
func (st *stream) writeBatch() error {
	if len(st.batch) == 0 {
		return nil
	}
	st.rc.SetWriteDeadline(time.Now().Add(st.s.opts.WriteTimeout))
	_, err := st.out.Write(st.batch)
	if cap(st.batch) > 4*maxBatch {
		st.batch = nil
	} else {
		st.batch = st.batch[:0]
	}
	if err != nil {
		return errClientGone
	}
	return nil
}

// flush delivers what was written.
func (st *stream) flush() error {
	if err := st.writeBatch(); err != nil {
		return err
	}
	st.pending = false
	if err := st.rc.Flush(); err != nil {
		return errClientGone
	}
	return nil
}
