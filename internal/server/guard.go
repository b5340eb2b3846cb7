package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// loopbackHosts are the host names the server answers to: a browser that
// reaches it under any other name (a rebinding attacker's domain) is
// refused.
var loopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// localPort returns the port the request came in on, from its connection.
func localPort(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return strconv.Itoa(tcp.Port)
	}
	_, port, _ := net.SplitHostPort(addr.String())
	return port
}

// hostAllowed reports whether the Host header names this server: a
// loopback name with the port the request came in on. With AllowRemote any
// name with that port is accepted (the token still guards every route).
func (s *Server) hostAllowed(r *http.Request) bool {
	port := localPort(r)
	if port == "" {
		return false
	}
	host, p, err := net.SplitHostPort(r.Host)
	if err != nil || p != port {
		return false
	}
	if s.opts.AllowRemote {
		return true
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	for _, h := range loopbackHosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// originAllowed reports whether a request's Origin, if it has one, is the
// server's own: http:// and a Host the server answers to.
func (s *Server) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#@") {
		return false
	}
	if s.opts.AllowRemote {
		return strings.EqualFold(rest, r.Host)
	}
	host, p, err := net.SplitHostPort(rest)
	if err != nil || p != localPort(r) {
		return false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	for _, h := range loopbackHosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// guard applies the checks every request passes before its route (see the
// package doc): Host, Origin and, on /api/, Sec-Fetch-Site other than
// same-origin or none (403); then, on /api/,
// the token (401) and the content type of mutations (415).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !s.hostAllowed(r) {
			s.writeError(w, r, errorf(http.StatusForbidden, protocol.CodeForbidden,
				"host %q is not this server's; use http://127.0.0.1:%s", r.Host, localPort(r)))
			return
		}
		if !s.originAllowed(r) {
			s.writeError(w, r, errorf(http.StatusForbidden, protocol.CodeForbidden, "cross-origin requests are refused"))
			return
		}
		api := r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
		if site := r.Header.Get("Sec-Fetch-Site"); api && site != "" && site != "same-origin" && site != "none" {
			s.writeError(w, r, errorf(http.StatusForbidden, protocol.CodeForbidden, "cross-site requests are refused"))
			return
		}
		if api {
			if !(r.URL.Path == "/api/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead)) && !s.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="mx-claw"`)
				s.writeError(w, r, errorf(http.StatusUnauthorized, protocol.CodeUnauthorized,
					"missing or wrong token: send Authorization: Bearer TOKEN (see server.json) or log in through the URL `mx-claw serve` printed"))
				return
			}
			if r.Method != http.MethodGet && r.Method != http.MethodHead && !isJSON(r.Header.Get("Content-Type")) {
				s.writeError(w, r, errorf(http.StatusUnsupportedMediaType, protocol.CodeUnsupportedMedia,
					"send Content-Type: application/json with every %s request", r.Method))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isJSON reports whether a Content-Type header says application/json.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// authorized reports whether the request carries the token, as a bearer
// token or in the panel's cookie.
func (s *Server) authorized(r *http.Request) bool {
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, ok := strings.Cut(auth, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && s.tokenMatches(strings.TrimSpace(tok))
	}
	if c, err := r.Cookie(cookieName(localPort(r))); err == nil {
		return s.tokenMatches(c.Value)
	}
	return false
}

// tokenMatches compares a presented token with the server's in constant
// time: both are hashed first, so not even the length leaks.
func (s *Server) tokenMatches(tok string) bool {
	a := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(a[:], s.tokenHash[:]) == 1
}

// cookieName is the panel's cookie for the server on port: browsers share
// cookies between the ports of one host, so two servers must not share a
// name.
func cookieName(port string) string { return "mx_claw_" + port }
