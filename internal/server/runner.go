package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// runner is the server's side of one session's turns: whether one of its
// turns runs, and the model chosen for the next one meanwhile. Its lock
// orders "is a turn running?" against "queue the message", so a message
// posted as a turn ends is either queued before the turn's last look at
// the queue or starts a turn of its own, never lost between the two.
type runner struct {
	mu      sync.Mutex
	running bool
	// model is the model of the session's next turn, chosen while one ran.
	model string
}

// runner returns the session's runner.
func (s *Server) runner(id string) *runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runners[id]
	if !ok {
		r = &runner{}
		s.runners[id] = r
	}
	return r
}

// begin is what a turn the server starts reports first: its id, or that
// the message was queued instead, or why nothing started.
type begin struct {
	turnID string
	queued bool
	err    error
}

// turnBody takes a session through the core: a new message (Core.Run) or
// an answered approval (Core.Answer).
type turnBody func(ctx context.Context, sink func(protocol.Event)) error

// sink hands an event of this process's turns to the streams.
func (s *Server) sink(e protocol.Event) { s.feeds.publish(context.Background(), e) }

// submit sends a user message, with its images, to a session: it starts
// a turn, or queues the message behind the running one (one with images
// cannot wait: 409).
func (s *Server) submit(id, text string, imgs []protocol.Image) (begin, error) {
	r := s.runner(id)
	r.mu.Lock()
	if s.isStopping() {
		r.mu.Unlock()
		return begin{}, shuttingDown
	}
	if err := s.checkImages(id, r, imgs); err != nil {
		r.mu.Unlock()
		return begin{}, err
	}
	if r.running {
		defer r.mu.Unlock()
		if _, err := s.app.Core.Enqueue(s.ctx, id, text, s.sink); err != nil {
			return begin{}, err
		}
		return begin{queued: true}, nil
	}
	// Messages left queued go first: the turn sends them with text, and
	// they leave the queue only when it stores them.
	model := r.model
	r.model = ""
	r.running = true
	r.mu.Unlock()
	// A message with images is not queued behind another process's turn
	// either: it is refused (409), images and all, for the user to send
	// again.
	b := s.start(id, r, text, s.runTurn(id, text, model, imgs...), len(imgs) == 0)
	return b, b.err
}

// isStopping reports whether Shutdown has begun.
func (s *Server) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// runTurn is the body of a turn for the session's queued messages and
// then input (with its images), if any (agent.TurnRequest.SendQueued).
func (s *Server) runTurn(id, input, model string, imgs ...protocol.Image) turnBody {
	return func(ctx context.Context, sink func(protocol.Event)) error {
		return s.app.Core.Run(ctx, agent.TurnRequest{SessionID: id, Input: input, Model: model,
			OnAsk: agent.AskWait, Budget: s.app.Budget(), Images: imgs, SendQueued: true,
			StopIfInterrupted: s.app.Config.ResumeInterrupted()}, sink)
	}
}

// start runs body on its own goroutine (see drive) and returns what it
// reports first. r.running is set by the caller.
func (s *Server) start(id string, r *runner, input string, body turnBody, queueIfHeld bool) begin {
	first := make(chan begin, 1)
	if !s.goTurn(func() { s.drive(id, r, input, body, queueIfHeld, first) }) {
		r.mu.Lock()
		r.running = false
		r.mu.Unlock()
		return begin{err: shuttingDown}
	}
	return <-first
}

// goTurn runs f as a turn the server waits for at Shutdown; false if the
// server is stopping.
func (s *Server) goTurn(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		f()
	}()
	return true
}

// drive runs body, then the messages queued meanwhile, one turn each time,
// until none is left. It reports the first turn's id (or why it did not
// start) on first. A turn that could not start because another process
// holds the session queues input (the user's new text, if any) if
// queueIfHeld, and the server sends the queue once that process lets go
// (watch). The queue is only read here: each turn takes its messages out
// when it stores them.
func (s *Server) drive(id string, r *runner, input string, body turnBody, queueIfHeld bool, first chan<- begin) {
	reported := false
	report := func(b begin) {
		if !reported {
			reported = true
			first <- b
		}
	}
	for {
		sink := func(e protocol.Event) {
			if !reported && e.TurnID != "" {
				report(begin{turnID: e.TurnID})
			}
			s.sink(e)
		}
		err := body(s.ctx, sink)
		stop := s.ctx.Err() != nil || errors.Is(err, context.Canceled)
		if !reported {
			// The turn never started: the request learns why.
			stop = true
			var queued *agent.QueuedError
			var held *store.LeaseHeldError
			var interrupted *agent.InterruptedTurnError
			switch {
			case errors.As(err, &interrupted):
				// A process died mid-turn and no takeover round has
				// come by yet: its turn goes on first (recorded as
				// failed by now), the new message queued behind it.
				switch {
				case input != "" && !queueIfHeld:
					// Images are not queued: the user sends them again.
					report(begin{err: errorf(http.StatusConflict, protocol.CodeSessionBusy,
						"session %s: its last turn was interrupted and goes on first; send the message again when it has ended", id)})
				case input != "":
					if _, qerr := s.app.Core.Enqueue(context.WithoutCancel(s.ctx), id, input, s.sink); qerr != nil {
						report(begin{err: qerr})
						break
					}
					report(begin{queued: true})
				default:
					report(begin{queued: true})
				}
				s.log.Info("resuming a turn a stopped process left", "session", id, "worker", interrupted.Owner)
				input, queueIfHeld = "", true
				r.mu.Lock()
				model := r.model
				r.model = ""
				r.mu.Unlock()
				body = s.resumeBody(agent.Recovered{SessionID: id, Owner: interrupted.Owner}, model)
				continue
			case errors.As(err, &queued):
				report(begin{queued: true})
			case errors.As(err, &held) && queueIfHeld && input == "":
				report(begin{queued: true})
				s.watch(id)
			case errors.As(err, &held) && queueIfHeld:
				if _, qerr := s.app.Core.Enqueue(context.WithoutCancel(s.ctx), id, input, s.sink); qerr != nil {
					report(begin{err: qerr})
				} else {
					report(begin{queued: true})
					s.watch(id)
				}
			default:
				report(begin{err: err})
			}
		} else if errors.Is(err, agent.ErrLeaseLost) {
			s.log.Warn("turn aborted: another process took the session over", "session", id, "err", err)
		} else if err != nil && !stop {
			s.log.Info("turn ended with an error", "session", id, "err", err)
		}
		bg := context.WithoutCancel(s.ctx)
		r.mu.Lock()
		var left []protocol.QueuedInput
		if !stop {
			left, err = s.app.Store.QueuedInputs(bg, id)
			if err != nil {
				s.log.Warn("read queued inputs", "session", id, "err", err)
			}
		}
		if len(left) == 0 {
			r.running = false
			if r.model != "" {
				s.applyModel(bg, id, r.model)
				r.model = ""
			}
			r.mu.Unlock()
			return
		}
		model := r.model
		r.model = ""
		r.mu.Unlock()
		input = ""
		body = s.runTurn(id, "", model)
		queueIfHeld = true
	}
}

// applyModel stores the model chosen while the session's turn ran.
func (s *Server) applyModel(ctx context.Context, id, model string) {
	sess, err := s.app.Store.GetSession(ctx, id)
	if err == nil {
		sess.Model = model
		err = s.app.Store.UpdateSession(ctx, sess)
	}
	if err != nil {
		s.log.Warn("store the session's model", "session", id, "err", err)
	}
}

// watch marks a session whose queued messages wait for another process's
// turn: when its lease is gone and nobody sent them, the server does.
func (s *Server) watch(id string) {
	s.mu.Lock()
	s.watching[id] = true
	s.mu.Unlock()
}

// checkWatched sends the queued messages of watched sessions whose lease
// another process no longer holds.
func (s *Server) checkWatched() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.watching))
	for id := range s.watching {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		if s.heldElsewhere(s.ctx, id) {
			continue
		}
		s.mu.Lock()
		delete(s.watching, id)
		s.mu.Unlock()
		s.sendQueued(id)
	}
}

// sendQueued starts a turn with the session's queued messages, unless a
// turn of this server runs (it sends them when it ends) or none is left
// (the other process sent them). They stay queued until the turn stores
// them, so a server stopping meanwhile leaves them for the next.
func (s *Server) sendQueued(id string) {
	r := s.runner(id)
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return
	}
	left, err := s.app.Store.QueuedInputs(s.ctx, id)
	if err != nil || len(left) == 0 {
		r.mu.Unlock()
		return
	}
	model := r.model
	r.model = ""
	r.running = true
	r.mu.Unlock()
	s.startQueued(id, r, s.runTurn(id, "", model))
}

// startQueued runs body (a turn that sends the session's queued messages,
// or resumes its interrupted turn) and then what is queued, as drive does;
// r.running is set by the caller. Nobody waits for its first report.
func (s *Server) startQueued(id string, r *runner, body turnBody) {
	first := make(chan begin, 1)
	if !s.goTurn(func() { s.drive(id, r, "", body, true, first) }) {
		r.mu.Lock()
		r.running = false
		r.mu.Unlock()
	}
}

// heldElsewhere reports whether another process holds the session's
// lease (a turn runs there).
func (s *Server) heldElsewhere(ctx context.Context, id string) bool {
	l, err := s.app.Store.GetLease(ctx, id)
	if err != nil {
		return false
	}
	return l.Owner != s.app.Core.Owner() && l.ExpiresAt.After(time.Now())
}
