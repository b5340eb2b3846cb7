package server

import (
	"context"
	"net/http"

	"github.com/mx-claw/mx-claw/internal/agent"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Subagents' events on their parent's stream.
//
// A task call's subagent runs in a session of its own and its events are
// stored there. A client that follows the parent session must still see
// them — above all the subagent's approval requests, which nobody else
// answers — so the parent's feed carries them too, as nested items: sent
// like deltas, without an SSE id (their sequence is the child's, not the
// parent's, so a reconnect neither replays them nor skips by them), with
// the child's sessionId and the parentSessionId and parentToolCallId the
// core stamped on them. They come from this process's turns (the sink
// hands each of a subagent's events to both feeds) and, for a turn that
// another process runs, from the poller, which reads the stored events of
// the followed session's active children. A child's position on its
// parent's feed (the last stored sequence published) keeps the two from
// publishing an event twice. A client that reconnects learns of the
// children's pending approvals from GET /api/sessions/{id}, which lists
// them with the parent's own (see pendingWithChildren).

// maxPolledChildren is how many of a session's most recently updated
// child sessions the poller looks at.
const maxPolledChildren = 16

// publishNested hands an event of a subagent's session to its parent's
// feed, if a stream follows the parent.
func (fs *feeds) publishNested(e protocol.Event) {
	f := fs.get(e.ParentSessionID)
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if stored(e) {
		if e.Sequence <= f.children[e.SessionID] {
			return
		}
		if f.children == nil {
			f.children = make(map[string]int64)
		}
		f.children[e.SessionID] = e.Sequence
	}
	f.broker.Publish(&item{ev: e, nested: true})
}

// pollChildren publishes on f the stored events of f's session's children
// that are running or wait for an approval (and of those it followed
// until now, to their last event), from where each stood.
func (fs *feeds) pollChildren(ctx context.Context, f *feed) {
	kids, err := fs.store.ListSessions(ctx, store.ListOptions{Parent: f.id, Limit: maxPolledChildren})
	if err != nil {
		if ctx.Err() == nil {
			fs.log.Warn("poll subagents", "session", f.id, "err", err)
		}
		return
	}
	for _, k := range kids {
		active := k.Status == protocol.StatusRunning || k.Status == protocol.StatusWaitingForApproval
		f.mu.Lock()
		after, known := f.children[k.ID]
		f.mu.Unlock()
		if !active && !known {
			continue
		}
		evs, err := fs.store.Events(ctx, k.ID, after, pollBatch)
		if err != nil {
			if ctx.Err() == nil {
				fs.log.Warn("poll subagent events", "session", k.ID, "err", err)
			}
			continue
		}
		f.mu.Lock()
		if f.children == nil {
			f.children = make(map[string]int64)
		}
		for _, e := range evs {
			if e.Sequence <= f.children[k.ID] {
				continue
			}
			if e.ParentSessionID == "" {
				e.ParentSessionID = f.id
			}
			f.broker.Publish(&item{ev: e, nested: true})
			f.children[k.ID] = e.Sequence
		}
		if !active && len(evs) == 0 {
			// Finished and fully published: no more reads.
			delete(f.children, k.ID)
		}
		f.mu.Unlock()
	}
}

// pendingWithChildren returns the session's pending approvals and those
// of its subagents' sessions that are still active (each with its own
// sessionId): what a client must show to answer every request the
// session's turn waits for.
func (s *Server) pendingWithChildren(ctx context.Context, id string) ([]protocol.Approval, error) {
	pending, err := s.app.Store.PendingApprovals(ctx, id)
	if err != nil {
		return nil, err
	}
	kids, err := s.app.Store.ListSessions(ctx, store.ListOptions{Parent: id, Limit: maxPolledChildren})
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		if k.Status != protocol.StatusRunning && k.Status != protocol.StatusWaitingForApproval {
			continue
		}
		more, err := s.app.Store.PendingApprovals(ctx, k.ID)
		if err != nil {
			return nil, err
		}
		pending = append(pending, more...)
	}
	return pending, nil
}

// approvalOwner returns the session that holds the pending approval rid
// asked for in session id: id itself, or one of its active subagents'
// sessions (the panel may answer a subagent's request through its
// parent). It returns the approval, or nil if none is pending.
func (s *Server) approvalOwner(ctx context.Context, id, rid string) (*protocol.Approval, error) {
	pending, err := s.pendingWithChildren(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := range pending {
		if pending[i].ID == rid {
			return &pending[i], nil
		}
	}
	return nil, nil
}

// answerChild answers a subagent's approval that no other process's turn
// waits for (answerApproval stores the answer for such a turn). A
// subagent asks only while its parent's turn waits for it inside the task
// call (it is never paused in the store), so the answer goes to that
// waiting turn here if the parent's turn is this server's; otherwise
// nothing can take it (409).
func (s *Server) answerChild(w http.ResponseWriter, r *http.Request, parentID string, ans agent.ResolveRequest, out protocol.ApprovalAccepted) error {
	rn := s.runner(parentID)
	rn.mu.Lock()
	running := rn.running
	rn.mu.Unlock()
	if !running {
		return errorf(http.StatusConflict, protocol.CodeSessionBusy,
			"subagent session %s waits for approval %s in a turn this server does not run; answer it where that turn runs", ans.SessionID, ans.RequestID)
	}
	if err := s.app.Core.Answer(r.Context(), ans, s.sink); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}
