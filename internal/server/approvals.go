package server

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AnsweredBy is how a process whose turn waits for an approval names the
// server when the answer comes from it.
const AnsweredBy = "the web panel"

// answerWait is how long an answer to an approval a turn of this server
// waits for is given to reach it before the request is answered anyway.
const answerWait = 2 * time.Second

// answerApproval serves POST /api/sessions/{id}/approvals/{requestId}
// {"decision", "scope"?, "message"?}. The answer goes to the turn that
// waits for it — of this server, or of another process (the REPL in a
// terminal), which takes it from the store and goes on there — or
// resumes here a turn paused in the store (by `mx-claw run --on-ask
// pause`, or a process that stopped): 202 and the turn goes on. Not
// pending: 404; the session busy in another process: 409. A subagent's
// request may be answered with its own session's id or with its parent's
// (nested.go).
func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) error {
	id, rid := r.PathValue("id"), r.PathValue("requestId")
	var req protocol.ApprovalAnswer
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	if req.Decision != protocol.DecisionAllow && req.Decision != protocol.DecisionDeny {
		return badRequest("decision %q: want allow or deny", req.Decision)
	}
	switch req.Scope {
	case "", protocol.ScopeOnce, protocol.ScopeSession, protocol.ScopeAlways:
	default:
		return badRequest("scope %q: want once, session or always", req.Scope)
	}
	sess, err := s.session(r, id)
	if err != nil {
		return err
	}
	approval, err := s.approvalOwner(r.Context(), id, rid)
	if err != nil {
		return err
	}
	if approval == nil {
		return errorf(http.StatusNotFound, protocol.CodeApprovalNotFound,
			"no pending approval %s in session %s (already answered, or cancelled)", rid, id)
	}
	scope := req.Scope
	if req.Decision == protocol.DecisionDeny {
		scope = ""
	}
	ans := agent.ResolveRequest{SessionID: id, RequestID: rid, Approve: req.Decision == protocol.DecisionAllow,
		Scope: scope, Feedback: req.Message, OnAsk: agent.AskWait, Budget: s.app.Budget(), By: AnsweredBy}
	out := protocol.ApprovalAccepted{RequestID: rid, Decision: req.Decision, TurnID: approval.TurnID}
	child := approval.SessionID != id || sess.ParentID != ""
	// A subagent's request, asked by its own session or its parent, is
	// answered in the subagent's session.
	ans.SessionID = approval.SessionID
	if s.app.Core.WaitsElsewhere(r.Context(), *approval) {
		// A turn of another process (the REPL in a terminal) waits for
		// it: the answer is stored, and that turn takes it and goes on
		// there; its events reach the streams from the store.
		if err := s.app.Core.Answer(r.Context(), ans, nil); err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, out)
		return nil
	}
	if child {
		return s.answerChild(w, r, cmp.Or(sess.ParentID, id), ans, out)
	}

	rn := s.runner(id)
	rn.mu.Lock()
	if s.isStopping() {
		rn.mu.Unlock()
		return shuttingDown
	}
	if rn.running {
		rn.mu.Unlock()
		// A turn of this server waits for the answer: it takes it at
		// once. (Should it not, the answer resumes the turn on a goroutine
		// of its own and the request does not wait for that.)
		done := make(chan error, 1)
		if !s.goTurn(func() { done <- s.app.Core.Answer(s.ctx, ans, s.sink) }) {
			return shuttingDown
		}
		select {
		case err := <-done:
			if err != nil {
				return err
			}
		case <-time.After(answerWait):
		}
		writeJSON(w, http.StatusAccepted, out)
		return nil
	}
	rn.running = true
	rn.mu.Unlock()
	b := s.start(id, rn, "", func(ctx context.Context, sink func(protocol.Event)) error {
		return s.app.Core.Answer(ctx, ans, sink)
	}, false)
	if b.err != nil {
		return b.err
	}
	if b.turnID != "" {
		out.TurnID = b.turnID
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}
