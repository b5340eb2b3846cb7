package server

import (
	"net/http"
	"strings"
)

// login trades the token of the login URL (GET /login?token=TOKEN) for the
// panel's cookie (HttpOnly, SameSite=Strict) and sends the browser to the
// panel, so the token leaves the address bar.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.tokenMatches(r.URL.Query().Get("token")) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte("Wrong or missing token. Open the login URL `mx-claw serve` printed, or read the token from server.json in the mx-claw home.\n"))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName(localPort(r)),
		Value:    s.token,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
	})
	next := r.URL.Query().Get("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		next = "/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// static serves the panel's files (Options.Web) with the panel's
// Content-Security-Policy; without them, a page saying so.
func (s *Server) static() http.Handler {
	var files http.Handler
	if s.opts.Web != nil {
		files = http.FileServerFS(s.opts.Web)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", s.opts.CSP)
		h.Set("Cache-Control", "no-cache")
		if files == nil {
			if r.URL.Path != "/" {
				http.NotFound(w, r)
				return
			}
			h.Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(noPanel))
			return
		}
		files.ServeHTTP(w, r)
	})
}

const noPanel = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mx-claw</title></head>
<body><h1>mx-claw</h1><p>This build has no web panel. The HTTP API is under /api/.</p></body></html>
`
