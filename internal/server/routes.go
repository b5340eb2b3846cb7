package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// maxBody caps a request body.
const maxBody = 1 << 20

// methods maps HTTP methods to the handlers of one path.
type methods map[string]func(w http.ResponseWriter, r *http.Request) error

// routes returns the mux of every route. Each path answers its methods
// and a JSON 405 for the others.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(path string, m methods) {
		mux.Handle(path, s.dispatch(m))
	}
	// The contract's routes (DESIGN §11).
	handle("/api/health", methods{"GET": s.health})
	handle("/api/sessions", methods{"GET": s.listSessions, "POST": s.createSession})
	handle("/api/sessions/{id}", methods{"GET": s.showSession})
	handle("/api/sessions/{id}/messages", methods{"POST": s.postMessage})
	handle("/api/sessions/{id}/cancel", methods{"POST": s.cancelTurn})
	handle("/api/sessions/{id}/approvals/{requestId}", methods{"POST": s.answerApproval})
	handle("/api/sessions/{id}/model", methods{"PUT": s.setModel})
	handle("/api/sessions/{id}/events", methods{"GET": s.events})
	handle("/api/models", methods{"GET": s.listModels})
	handle("/api/settings", methods{"GET": s.getSettings, "PUT": s.putSettings})
	// Beyond the contract, for the panel.
	handle("/api/sessions/{id}/queued", methods{"GET": s.listQueued})
	handle("/api/sessions/{id}/queued/{queuedId}", methods{"DELETE": s.removeQueued})
	handle("/api/sessions/{id}/mode", methods{"GET": s.getMode, "PUT": s.setMode})
	handle("/api/", methods{})
	// The panel.
	mux.HandleFunc("/login", s.login)
	mux.Handle("/", s.static())
	return mux
}

// dispatch runs the handler of the request's method, answering its error
// as JSON.
func (s *Server) dispatch(m methods) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(m) == 0 {
			s.writeError(w, r, errorf(http.StatusNotFound, protocol.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
			return
		}
		h, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = m[http.MethodGet]
		}
		if !ok {
			allowed := make([]string, 0, len(m))
			for k := range m {
				allowed = append(allowed, k)
			}
			slices.Sort(allowed)
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			s.writeError(w, r, errorf(http.StatusMethodNotAllowed, protocol.CodeMethodNotAllowed,
				"%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
			return
		}
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// decode reads a JSON body into v: one object, no unknown fields, at most
// maxBody bytes. An empty body is allowed only if empty is true.
func decode(w http.ResponseWriter, r *http.Request, v any, empty bool) error {
	return decodeMax(w, r, v, empty, maxBody)
}

// decodeMax is decode with a body of at most limit bytes.
func decodeMax(w http.ResponseWriter, r *http.Request, v any, empty bool, limit int64) error {
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			return errorf(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "the request body is larger than %d bytes", limit)
		case errors.Is(err, io.EOF):
			if empty {
				return nil
			}
			return errorf(http.StatusBadRequest, protocol.CodeBadRequest, "the request body is empty; send a JSON object")
		}
		return errorf(http.StatusBadRequest, protocol.CodeBadRequest, "the request body is not the JSON expected: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, protocol.CodeBadRequest, "the request body holds more than one JSON value")
	}
	return nil
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, protocol.Health{OK: true})
	return nil
}

// notFound is the error of a session that does not exist.
func notFound(id string) error {
	return errorf(http.StatusNotFound, protocol.CodeSessionNotFound, "session %s does not exist", id)
}

// shuttingDown is the error of a turn asked for while the server stops.
var shuttingDown = errorf(http.StatusServiceUnavailable, protocol.CodeShuttingDown, "the server is shutting down")

// badRequest is a 400 with a formatted message.
func badRequest(format string, args ...any) error {
	return errorf(http.StatusBadRequest, protocol.CodeBadRequest, "%s", fmt.Sprintf(format, args...))
}
