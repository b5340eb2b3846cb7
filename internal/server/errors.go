package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// apiError is an error answer: the HTTP status and the body's code and
// message.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// writeError answers with err: an *apiError as it is, any other error
// mapped by classify.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = classify(err)
	}
	if ae.status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, ae.status, protocol.ErrorResponse{Error: protocol.ErrorBody{Code: ae.code, Message: ae.msg}})
}

// classify maps the core's and the store's errors to statuses: bad input
// and configuration 400, missing things 404, a session busy in another
// process 409, the rest 500.
func classify(err error) *apiError {
	var held *store.LeaseHeldError
	var cfg *agent.ConfigError
	switch {
	case errors.As(err, &held):
		return &apiError{http.StatusConflict, protocol.CodeSessionBusy, err.Error()}
	case errors.Is(err, agent.ErrTurnActive), errors.Is(err, agent.ErrLeaseLost), errors.Is(err, store.ErrLeaseLost):
		return &apiError{http.StatusConflict, protocol.CodeSessionBusy, err.Error()}
	case errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, store.ErrNotFound):
		return &apiError{http.StatusNotFound, protocol.CodeNotFound, err.Error()}
	case errors.Is(err, agent.ErrNoPendingApproval):
		return &apiError{http.StatusNotFound, protocol.CodeApprovalNotFound, err.Error()}
	case errors.As(err, &cfg):
		return &apiError{http.StatusBadRequest, protocol.CodeBadRequest, err.Error()}
	}
	return &apiError{http.StatusInternalServerError, protocol.CodeInternal, err.Error()}
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"internal","message":"encode the answer"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
