package server

import (
	"errors"
	"net/http"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// getMode serves GET /api/sessions/{id}/mode: the permission mode of the
// session's turns (a mode chosen for it here, else the settings').
func (s *Server) getMode(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := s.session(r, id); err != nil {
		return err
	}
	mode, err := s.driver.Mode(r.Context(), id)
	if err != nil {
		return errorf(http.StatusBadRequest, protocol.CodeInvalidSettings, "%v", err)
	}
	writeJSON(w, http.StatusOK, protocol.SessionMode{Mode: mode, Modes: modeNames()})
	return nil
}

// setMode serves PUT /api/sessions/{id}/mode {"mode"}: the session's
// turns in this server use the mode from their next tool call on (the
// settings are not changed; PUT /api/settings changes the default).
func (s *Server) setMode(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var req protocol.SessionMode
	if err := decode(w, r, &req, false); err != nil {
		return err
	}
	if _, err := s.session(r, id); err != nil {
		return err
	}
	if err := s.driver.SetMode(r.Context(), id, req.Mode); err != nil {
		if errors.Is(err, app.ErrUnknownSession) {
			return notFound(id)
		}
		return badRequest("%v", err)
	}
	writeJSON(w, http.StatusOK, protocol.SessionMode{Mode: req.Mode, Modes: modeNames()})
	return nil
}

func modeNames() []string {
	var out []string
	for _, m := range permission.Modes() {
		out = append(out, string(m))
	}
	return out
}
