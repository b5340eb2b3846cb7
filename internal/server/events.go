package server

import (
	"encoding/json"
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
	s  *Server
	r  *http.Request
	rc *http.ResponseController
	w  *sse.Writer
	id string
	// sent is the sequence of the last stored event sent.
	sent int64
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
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{s: s, r: r, rc: http.NewResponseController(w), w: sse.NewWriter(w), id: id, sent: after}
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
	if err := st.w.Retry(retryDelay); err != nil {
		return errClientGone
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
func (st *stream) follow(sub *bus.Subscription[protocol.Event], last int64) error {
	// Events the feed published before this subscription.
	if last > st.sent {
		if err := st.replay(last); err != nil {
			return err
		}
	}
	pos := last // the feed's position: the last stored event seen on it
	beat := time.NewTimer(st.s.opts.HeartbeatInterval)
	defer beat.Stop()
	for {
		if st.pending && len(sub.C()) == 0 {
			if err := st.flush(); err != nil {
				return err
			}
		}
		select {
		case e, ok := <-sub.C():
			if !ok {
				if !sub.Dropped() {
					return st.closing()
				}
				return nil
			}
			if stored(e) {
				pos = e.Sequence
				if e.Sequence <= st.sent {
					continue
				}
				if e.Sequence > st.sent+1 {
					if err := st.replay(e.Sequence - 1); err != nil {
						return err
					}
				}
				if err := st.send(e, true); err != nil {
					return err
				}
			} else if pos >= st.sent {
				// A delta belongs after the stored event before it; one
				// from before what the client already has is stale.
				if err := st.send(e, false); err != nil {
					return err
				}
			}
			resetTimer(beat, st.s.opts.HeartbeatInterval)
		case <-beat.C:
			if err := st.send(protocol.Event{Type: protocol.EventStreamHeartbeat, SessionID: st.id,
				Sequence: st.sent, Timestamp: time.Now().UTC()}, false); err != nil {
				return err
			}
			beat.Reset(st.s.opts.HeartbeatInterval)
		case <-st.s.closing:
			// The feed had every stored event before closing was closed:
			// send what is buffered, then the last word.
			if err := st.drain(sub, pos); err != nil {
				return err
			}
			return st.closing()
		case <-st.r.Context().Done():
			return errClientGone
		}
	}
}

// drain sends the events already buffered in sub, without waiting.
func (st *stream) drain(sub *bus.Subscription[protocol.Event], pos int64) error {
	for {
		var e protocol.Event
		var ok bool
		select {
		case e, ok = <-sub.C():
		default:
			return nil
		}
		if !ok {
			return nil
		}
		switch {
		case stored(e) && e.Sequence == st.sent+1:
			pos = e.Sequence
			if err := st.send(e, true); err != nil {
				return err
			}
		case stored(e):
			pos = e.Sequence
		case pos >= st.sent:
			if err := st.send(e, false); err != nil {
				return err
			}
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
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	id := ""
	if withID {
		id = strconv.FormatInt(e.Sequence, 10)
	}
	st.rc.SetWriteDeadline(time.Now().Add(st.s.opts.WriteTimeout))
	if err := st.w.Event(id, string(e.Type), data); err != nil {
		return errClientGone
	}
	if withID {
		st.sent = e.Sequence
	}
	st.pending = true
	return nil
}

// flush delivers what was written.
func (st *stream) flush() error {
	st.pending = false
	st.rc.SetWriteDeadline(time.Now().Add(st.s.opts.WriteTimeout))
	if err := st.rc.Flush(); err != nil {
		return errClientGone
	}
	return nil
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	t.Reset(d)
}
