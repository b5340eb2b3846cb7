package server

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// maxSessions caps GET /api/sessions unless ?limit= says otherwise.
const maxSessions = 500

// listSessions serves GET /api/sessions[?q=TEXT][&workspace=DIR][&limit=N]:
// sessions most recently updated first; q keeps those whose title or
// workspace contains it (case-insensitively).
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := maxSessions
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest("limit %q is not a positive number", v)
		}
		limit = n
	}
	search := strings.ToLower(strings.TrimSpace(q.Get("q")))
	opts := store.ListOptions{Workspace: q.Get("workspace")}
	if search == "" {
		opts.Limit = limit
	}
	list, err := s.app.Store.ListSessions(r.Context(), opts)
	if err != nil {
		return err
	}
	out := make([]protocol.Session, 0, min(len(list), limit))
	for _, sess := range list {
		if len(out) == limit {
			break
		}
		if search == "" || strings.Contains(strings.ToLower(sess.Title), search) ||
			strings.Contains(strings.ToLower(sess.Workspace), search) {
			out = append(out, sess)
		}
	}
	writeJSON(w, http.StatusOK, protocol.SessionList{Sessions: out})
	return nil
}

// createSession serves POST /api/sessions {"workspace", "model"?}: a new
// idle session in an existing directory, on a ready model (201).
func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req protocol.CreateSession
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	ws, err := workspaceDir(req.Workspace)
	if err != nil {
		return err
	}
	m, err := s.app.ResolveModel(req.Model)
	if err != nil {
		return errorf(http.StatusBadRequest, protocol.CodeProviderNotReady, "%v", err)
	}
	sess, err := s.app.Core.CreateSession(r.Context(), ws, m.ID, s.sink)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sess)
	return nil
}

// workspaceDir checks a workspace given by a client: an absolute path of
// an existing directory, returned with symbolic links resolved (as the
// terminal's --cwd is).
func workspaceDir(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errorf(http.StatusBadRequest, protocol.CodeWorkspaceNotFound, "workspace is missing: give the absolute path of a directory")
	}
	if !filepath.IsAbs(p) {
		return "", errorf(http.StatusBadRequest, protocol.CodeWorkspaceNotFound, "workspace %q is not an absolute path", p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", errorf(http.StatusBadRequest, protocol.CodeWorkspaceNotFound, "workspace %s does not exist", p)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", errorf(http.StatusBadRequest, protocol.CodeWorkspaceNotFound, "workspace %s is not a directory", p)
	}
	return real, nil
}

// showSession serves GET /api/sessions/{id}: the session, its stored
// messages and its pending approvals, with those of its running subagents
// (each naming its own sessionId).
func (s *Server) showSession(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	sess, err := s.session(r, id)
	if err != nil {
		return err
	}
	// The queue first: a message sent meanwhile left it in the
	// transaction that stored it, so the transcript read next has it. A
	// client that lost the answer to a post finds the message in one of
	// the two if it was accepted (doc.go, "Turns").
	queued, err := s.app.Store.QueuedInputs(r.Context(), id)
	if err != nil {
		return err
	}
	msgs, err := s.app.Store.Messages(r.Context(), id, 0)
	if err != nil {
		return err
	}
	pending, err := s.pendingWithChildren(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, protocol.SessionDetail{Session: *sess, Messages: msgs, PendingApprovals: pending, Queued: queued})
	return nil
}

// session returns a stored session, or the 404 that says it does not
// exist.
func (s *Server) session(r *http.Request, id string) (*protocol.Session, error) {
	sess, err := s.app.Store.GetSession(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(id)
	}
	return sess, err
}

// postMessage serves POST /api/sessions/{id}/messages {"text", "images"?}
// (images.go): 202 with
// the id of the turn it started, or {"queued": true} when the session was
// busy (in this server or another process) and the message waits.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var req protocol.SendMessage
	if err := decodeMax(w, r, &req, false, maxMessageBody); err != nil {
		return err
	}
	if strings.TrimSpace(req.Text) == "" {
		return badRequest("text is empty")
	}
	if _, err := s.session(r, id); err != nil {
		return err
	}
	imgs, err := messageImages(req.Images)
	if err != nil {
		return err
	}
	b, err := s.submit(id, req.Text, imgs)
	if err != nil {
		var cfg *agent.ConfigError
		if errors.As(err, &cfg) {
			return errorf(http.StatusBadRequest, protocol.CodeProviderNotReady, "%v", err)
		}
		return err
	}
	writeJSON(w, http.StatusAccepted, protocol.MessageAccepted{TurnID: b.turnID, Queued: b.queued})
	return nil
}

// cancelTurn serves POST /api/sessions/{id}/cancel: the turn this server
// runs on the session stops (stored as cancelled); one that another
// process runs is that process's to stop (409).
func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := decode(w, r, &struct{}{}, true); err != nil {
		return err
	}
	if _, err := s.session(r, id); err != nil {
		return err
	}
	if s.app.Core.Cancel(id) {
		writeJSON(w, http.StatusAccepted, protocol.CancelResult{Cancelled: true})
		return nil
	}
	if s.heldElsewhere(r.Context(), id) {
		return errorf(http.StatusConflict, protocol.CodeSessionBusy,
			"session %s runs a turn in another process (a terminal); stop it there", id)
	}
	writeJSON(w, http.StatusOK, protocol.CancelResult{Cancelled: false})
	return nil
}

// setModel serves PUT /api/sessions/{id}/model {"model"}: the session's
// model from its next turn on. The model must be ready.
func (s *Server) setModel(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var req protocol.SetModel
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	if strings.TrimSpace(req.Model) == "" {
		return badRequest("model is empty; give provider/model")
	}
	m, err := s.app.ResolveModel(req.Model)
	if err != nil {
		return errorf(http.StatusBadRequest, protocol.CodeProviderNotReady, "%v", err)
	}
	sess, err := s.session(r, id)
	if err != nil {
		return err
	}
	rn := s.runner(id)
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.running {
		rn.model = m.ID
		sess.Model = m.ID
		writeJSON(w, http.StatusOK, protocol.ModelChanged{Session: *sess, Pending: true})
		return nil
	}
	if s.heldElsewhere(r.Context(), id) {
		return errorf(http.StatusConflict, protocol.CodeSessionBusy,
			"session %s runs a turn in another process; change its model when that turn ends", id)
	}
	sess.Model = m.ID
	if err := s.app.Store.UpdateSession(r.Context(), sess); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, protocol.ModelChanged{Session: *sess})
	return nil
}

// listQueued serves GET /api/sessions/{id}/queued.
func (s *Server) listQueued(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := s.session(r, id); err != nil {
		return err
	}
	q, err := s.app.Store.QueuedInputs(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, protocol.QueuedList{Queued: q})
	return nil
}

// removeQueued serves DELETE /api/sessions/{id}/queued/{queuedId}: the
// message is not sent (204); one already sent or removed is 404.
func (s *Server) removeQueued(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	qid, err := strconv.ParseInt(r.PathValue("queuedId"), 10, 64)
	if err != nil || qid < 1 {
		return badRequest("queued message id %q is not a number", r.PathValue("queuedId"))
	}
	if _, err := s.session(r, id); err != nil {
		return err
	}
	if _, err := s.app.Core.RemoveQueued(r.Context(), id, qid, nil); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, protocol.CodeQueuedNotFound,
				"message %d is not queued in session %s (already sent or removed)", qid, id)
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
