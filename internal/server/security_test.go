package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// apiRoutes are one request of every /api/ route.
var apiRoutes = []struct{ method, path string }{
	{"GET", "/api/sessions"},
	{"POST", "/api/sessions"},
	{"GET", "/api/sessions/S"},
	{"POST", "/api/sessions/S/messages"},
	{"POST", "/api/sessions/S/cancel"},
	{"POST", "/api/sessions/S/approvals/R"},
	{"PUT", "/api/sessions/S/model"},
	{"GET", "/api/sessions/S/events"},
	{"GET", "/api/models"},
	{"GET", "/api/settings"},
	{"PUT", "/api/settings"},
	{"GET", "/api/sessions/S/queued"},
	{"DELETE", "/api/sessions/S/queued/1"},
	{"GET", "/api/sessions/S/mode"},
	{"PUT", "/api/sessions/S/mode"},
	{"GET", "/api/nothing-here"},
	{"POST", "/api/health"},
}

// checkError checks an error answer: the status and the JSON body's code.
func checkError(t *testing.T, what string, resp *http.Response, data []byte, status int, code string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d\n%s", what, resp.StatusCode, status, data)
		return
	}
	var e protocol.ErrorResponse
	if err := json.Unmarshal(data, &e); err != nil || e.Error.Code != code || e.Error.Message == "" {
		t.Errorf("%s: body %s, want {\"error\": {\"code\": %q, \"message\": ...}}", what, data, code)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
}

func TestEveryAPIRouteNeedsTheToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	for _, rt := range apiRoutes {
		for name, h := range map[string]http.Header{
			"no token":        {"Content-Type": {"application/json"}},
			"wrong token":     {"Content-Type": {"application/json"}, "Authorization": {"Bearer " + strings.Repeat("0", 64)}},
			"token prefix":    {"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.srv.Token()[:63]}},
			"token and more":  {"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.srv.Token() + "0"}},
			"other scheme":    {"Content-Type": {"application/json"}, "Authorization": {"Basic " + f.srv.Token()}},
			"wrong cookie":    {"Content-Type": {"application/json"}, "Cookie": {cookieName(f.port()) + "=nope"}},
			"other port's":    {"Content-Type": {"application/json"}, "Cookie": {cookieName("1") + "=" + f.srv.Token()}},
			"token in query?": {"Content-Type": {"application/json"}},
		} {
			path := rt.path
			if name == "token in query?" {
				path += "?token=" + f.srv.Token()
			}
			resp, data := f.request(rt.method, path, "{}", h)
			checkError(t, rt.method+" "+rt.path+" with "+name, resp, data, http.StatusUnauthorized, protocol.CodeUnauthorized)
		}
	}
	// Health needs none.
	resp, data := f.request("GET", "/api/health", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(data)) != `{"ok":true}` {
		t.Errorf("health: %d %s", resp.StatusCode, data)
	}
}

func TestHostMustBeLoopbackWithThePort(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	port := f.port()
	for host, want := range map[string]int{
		"evil.example:" + port:   http.StatusForbidden,
		"127.0.0.1:" + port:      http.StatusOK,
		"localhost:" + port:      http.StatusOK,
		"LOCALHOST:" + port:      http.StatusOK,
		"[::1]:" + port:          http.StatusOK,
		"127.0.0.1:1":            http.StatusForbidden,
		"127.0.0.1":              http.StatusForbidden,
		"localhost.evil:" + port: http.StatusForbidden,
		"10.0.0.1:" + port:       http.StatusForbidden,
	} {
		h := f.auth()
		h.Set("Host", host)
		for _, path := range []string{"/api/sessions", "/api/health", "/", "/login?token=" + f.srv.Token()} {
			resp, data := f.request("GET", path, nil, h)
			got := resp.StatusCode
			if path == "/login?token="+f.srv.Token() && got == http.StatusSeeOther {
				got = http.StatusOK
			}
			if got != want {
				t.Errorf("Host %s, GET %s: status %d, want %d\n%s", host, path, resp.StatusCode, want, data)
			}
			if want == http.StatusForbidden {
				checkError(t, "Host "+host, resp, data, http.StatusForbidden, protocol.CodeForbidden)
			}
		}
	}
}

func TestAllowRemoteAcceptsOtherHostsWithThePortButStillTheToken(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *testOptions) { o.AllowRemote = true })
	h := f.auth()
	h.Set("Host", "192.168.1.20:"+f.port())
	if resp, data := f.request("GET", "/api/sessions", nil, h); resp.StatusCode != 200 {
		t.Errorf("remote host: %d %s", resp.StatusCode, data)
	}
	h.Del("Authorization")
	resp, data := f.request("GET", "/api/sessions", nil, h)
	checkError(t, "remote without token", resp, data, http.StatusUnauthorized, protocol.CodeUnauthorized)
	h = f.auth()
	h.Set("Host", "192.168.1.20:1")
	resp, data = f.request("GET", "/api/sessions", nil, h)
	checkError(t, "remote host, other port", resp, data, http.StatusForbidden, protocol.CodeForbidden)
}

func TestForeignOriginIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	sess := f.newSession()
	port := f.port()
	for origin, want := range map[string]int{
		"https://evil.example":        http.StatusForbidden,
		"http://evil.example:" + port: http.StatusForbidden,
		"null":                        http.StatusForbidden,
		"http://127.0.0.1:1":          http.StatusForbidden,
		"https://127.0.0.1:" + port:   http.StatusForbidden,
		"http://127.0.0.1:" + port:    http.StatusOK,
		"http://localhost:" + port:    http.StatusOK,
	} {
		h := f.auth()
		h.Set("Origin", origin)
		// A mutation.
		resp, data := f.request("PUT", "/api/sessions/"+sess.ID+"/model", `{"model":"fake/other-model"}`, h)
		if resp.StatusCode != want {
			t.Errorf("Origin %s, PUT model: status %d, want %d\n%s", origin, resp.StatusCode, want, data)
		}
		if want == http.StatusForbidden {
			checkError(t, "Origin "+origin, resp, data, http.StatusForbidden, protocol.CodeForbidden)
			// The event stream too.
			resp, data = f.request("GET", "/api/sessions/"+sess.ID+"/events", nil, h)
			checkError(t, "Origin "+origin+" on the event stream", resp, data, http.StatusForbidden, protocol.CodeForbidden)
		}
	}
	for site, want := range map[string]int{"cross-site": 403, "same-site": 403, "same-origin": 200, "none": 200} {
		h := f.auth()
		h.Set("Sec-Fetch-Site", site)
		resp, data := f.request("GET", "/api/sessions", nil, h)
		if want == 403 {
			checkError(t, "Sec-Fetch-Site: "+site, resp, data, http.StatusForbidden, protocol.CodeForbidden)
		} else if resp.StatusCode != want {
			t.Errorf("Sec-Fetch-Site: %s: %d %s", site, resp.StatusCode, data)
		}
	}
}

func TestMutationsNeedJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	sess := f.newSession()
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx"} {
		for _, rt := range []struct{ method, path, body string }{
			{"POST", "/api/sessions", `{"workspace":"` + f.ws + `"}`},
			{"POST", "/api/sessions/" + sess.ID + "/messages", `{"text":"hi"}`},
			{"POST", "/api/sessions/" + sess.ID + "/cancel", ``},
			{"PUT", "/api/settings", `{}`},
			{"DELETE", "/api/sessions/" + sess.ID + "/queued/1", ``},
		} {
			h := http.Header{"Authorization": {"Bearer " + f.srv.Token()}}
			if ct != "" {
				h.Set("Content-Type", ct)
			}
			resp, data := f.request(rt.method, rt.path, rt.body, h)
			checkError(t, rt.method+" "+rt.path+" as "+ct, resp, data, http.StatusUnsupportedMediaType, protocol.CodeUnsupportedMedia)
		}
	}
	// A charset parameter is fine.
	h := f.auth()
	h.Set("Content-Type", "application/json; charset=utf-8")
	if resp, data := f.request("PUT", "/api/settings", `{}`, h); resp.StatusCode != 200 {
		t.Errorf("JSON with charset: %d %s", resp.StatusCode, data)
	}
	if n := len(f.llm.ChatRequests()); n != 0 {
		t.Errorf("a refused request reached the model (%d requests)", n)
	}
}

func TestNoCORS(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	h := http.Header{"Origin": {"http://127.0.0.1:" + f.port()}, "Access-Control-Request-Method": {"POST"},
		"Access-Control-Request-Headers": {"content-type, authorization"}}
	resp, _ := f.request("OPTIONS", "/api/sessions", nil, h)
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("preflight answered with %s", k)
		}
	}
	if resp.StatusCode < 400 {
		t.Errorf("preflight status %d", resp.StatusCode)
	}
}

func TestTokenComparison(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tok := f.srv.Token()
	if len(tok) != 64 {
		t.Errorf("token %d characters, want 64 (32 random bytes)", len(tok))
	}
	if f2 := newFixture(t, nil); f2.srv.Token() == tok {
		t.Error("two servers made the same token")
	}
	for _, bad := range []string{"", tok[:63], tok + "x", strings.ToUpper(tok), " " + tok, tok[1:] + tok[:1]} {
		if f.srv.tokenMatches(bad) {
			t.Errorf("token %q accepted", bad)
		}
	}
	if !f.srv.tokenMatches(tok) {
		t.Error("the token is refused")
	}
}

func TestLoginSetsAStrictHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	resp, _ := f.request("GET", "/login?token="+f.srv.Token()+"&next=/sessions/x", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions/x" {
		t.Fatalf("login: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == cookieName(f.port()) {
			c = ck
		}
	}
	if c == nil {
		t.Fatalf("no cookie %s: %v", cookieName(f.port()), resp.Header["Set-Cookie"])
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
	}
	// The cookie authorizes the API.
	resp, data := f.request("GET", "/api/sessions", nil, http.Header{"Cookie": {c.Name + "=" + c.Value}})
	if resp.StatusCode != 200 {
		t.Errorf("API with the cookie: %d %s", resp.StatusCode, data)
	}
	// An open redirect is not offered.
	for _, next := range []string{"//evil.example/", "https://evil.example/", `/\evil.example`} {
		resp, _ = f.request("GET", "/login?token="+f.srv.Token()+"&next="+next, nil, nil)
		if loc := resp.Header.Get("Location"); loc != "/" {
			t.Errorf("next=%s redirected to %q", next, loc)
		}
	}
	resp, _ = f.request("GET", "/login?token=wrong", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("wrong token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}

func TestPanelFilesCarryTheCSP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	resp, data := f.request("GET", "/", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(data), "mx-claw") {
		t.Fatalf("/: %d %s", resp.StatusCode, data)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff")
	}
}

func TestInfoFileIsPrivateAndOwned(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	info := protocol.ServerInfo{URL: "http://127.0.0.1:1234", Token: "secret-token", PID: 42}
	if err := WriteInfo(home, info); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, InfoFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("server.json mode %v, want 0600", fi.Mode().Perm())
	}
	var got protocol.ServerInfo
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil || got != info {
		t.Errorf("server.json %s", data)
	}
	// Another server's file is left alone.
	if err := RemoveInfo(home, 43); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error("removed another process's server.json")
	}
	if err := RemoveInfo(home, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("server.json left behind")
	}
}

func TestServeAfterShutdownReturns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ln) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		ln.Close()
		t.Fatal("Serve after Shutdown kept serving")
	}
}
