package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// webSearchTurn is the web_search part of TestAPIKeyNeverLeaks: config.json
// names a Brave-style backend (a local fake), its key comes from the
// environment; the backend first rejects the key, echoing it, then
// answers. It returns the key and the environment a command of that turn
// saw, for the leak checks; every output goes through add.
func webSearchTurn(t *testing.T, e *env, sessionID string, add func(result) result) (key, childEnv string) {
	t.Helper()
	key = randomKey(t, "BSA-LEAKCHECK-")
	var mu sync.Mutex
	var tokens []string
	brave := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.Header.Get("X-Subscription-Token"))
		first := len(tokens) == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"subscription token `+r.Header.Get("X-Subscription-Token")+` is invalid"}`)
			return
		}
		io.WriteString(w, `{"web":{"results":[{"title":"Brave result","url":"https://example.test/r","description":"a <strong>snippet</strong>"}]}}`)
	}))
	t.Cleanup(brave.Close)
	path := filepath.Join(e.home, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["webSearch"] = map[string]any{"backend": "brave", "url": brave.URL}
	raw, _ = json.Marshal(cfg)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.Enqueue(
		llmtest.Call("web_search", `{"query":"first try"}`),
		llmtest.Call("web_search", `{"query":"second try"}`),
		llmtest.Call("run_command", `{"command":"env > search-env.txt"}`),
		llmtest.Text("searched"),
	)
	r := add(e.runEnv("", []string{fileBackend, "MX_CLAW_API_KEY_WEBSEARCH=" + key}, "run", "--json", "--yolo", "--session", sessionID, "search the web"))
	if r.code != 0 {
		t.Fatalf("search turn: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "[redacted]") || !strings.Contains(r.stdout, "Brave result") {
		t.Errorf("search turn: the rejection was not redacted or no result came:\n%s", r.stdout)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) != 2 || tokens[0] != key || tokens[1] != key {
		t.Errorf("the backend got tokens %q, want the key twice", tokens)
	}
	env, err := os.ReadFile(filepath.Join(e.ws, "search-env.txt"))
	if err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	return key, string(env)
}

// TestWebSearchAbsentUnconfigured: without a webSearch backend the tool is
// not offered; with a SearXNG one it is, and asks before searching.
func TestWebSearchAbsentUnconfigured(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("hi"))
	if r := e.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range e.srv.ChatRequests()[0].Chat.Tools {
		if name == "web_search" {
			t.Error("web_search is offered without a backend")
		}
	}
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"results":[{"title":"T","url":"https://example.test/","content":"c"}]}`)
	}))
	defer searx.Close()
	e2 := newEnv(t, llmtest.Call("web_search", `{"query":"q"}`), llmtest.Text("done"))
	raw, _ := os.ReadFile(filepath.Join(e2.home, "config.json"))
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	cfg["webSearch"] = map[string]any{"backend": "searxng", "url": searx.URL}
	raw, _ = json.Marshal(cfg)
	e2.writeHome("config.json", string(raw))
	r := e2.run("", "run", "search")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e2.srv.ChatRequests()
	if !strings.Contains(strings.Join(reqs[0].Chat.Tools, " "), "web_search") {
		t.Errorf("tools offered: %v", reqs[0].Chat.Tools)
	}
	if res := toolResults(reqs[1])["call_1"]; !strings.Contains(res, "needs the user's approval") || !strings.Contains(res, "web_search") {
		t.Errorf("an unapproved search: %s", res)
	}
}

// TestWebFetch: web_fetch asks by default; a domain rule lets it reach the
// host, even on loopback; bypass mode does not open loopback to it.
func TestWebFetch(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><title>Local docs</title><script>evil()</script></head><body><nav>menu</nav><main><h1>API</h1><p>Call <code>Do()</code>.</p></main></body></html>`)
	}))
	defer page.Close()
	url := page.URL + "/docs"
	calls := func() []llmtest.Reply {
		return []llmtest.Reply{llmtest.Call("web_fetch", `{"url":"`+url+`"}`), llmtest.Text("read")}
	}
	tests := []struct {
		name, settings string
		args           []string
		want           string
	}{
		{"asks by default", "", nil, "needs the user's approval"},
		{"domain rule", `{"permissions":{"allow":["web_fetch(domain:127.0.0.1)"]}}`, nil, "# API\n\nCall `Do()`."},
		{"bypass keeps loopback closed", "", []string{"--yolo"}, "loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, calls()...)
			if tt.settings != "" {
				e.writeHome("settings.json", tt.settings)
			}
			r := e.run("", append(append([]string{"run", "--json"}, tt.args...), "read the docs")...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			reqs := e.srv.ChatRequests()
			res := toolResults(reqs[len(reqs)-1])["call_1"]
			if !strings.Contains(res, tt.want) || strings.Contains(res, "evil()") || strings.Contains(res, "menu") {
				t.Errorf("result:\n%s", res)
			}
		})
	}
}
