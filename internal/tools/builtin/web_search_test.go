package builtin

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/websearch"
)

func TestWebSearchBackends(t *testing.T) {
	t.Parallel()
	const key = "BSA-test-key-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/searx/search" && r.URL.Query().Get("format") == "json":
			io.WriteString(w, `{"results":[{"title":"Go <b>generics</b>","url":"https://go.dev/doc/tutorial/generics","content":"Tutorial: Getting started &amp; more"},{"title":"Second","url":"https://example.test/2","content":""}]}`)
		case r.URL.Path == "/brave" && r.Header.Get("X-Subscription-Token") == key && r.URL.Query().Get("count") == "1":
			io.WriteString(w, `{"web":{"results":[{"title":"Brave hit","url":"https://example.test/b","description":"<strong>found</strong> it"}]}}`)
		case r.URL.Path == "/brave":
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid token `+r.Header.Get("X-Subscription-Token")+`"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env, _ := newEnv(t)

	sx, err := websearch.New("searxng", srv.URL+"/searx", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, NewWebSearch(sx), env, `{"query":"go generics"}`)
	want := "1. Go generics\n   https://go.dev/doc/tutorial/generics\n   Tutorial: Getting started & more\n2. Second\n   https://example.test/2"
	if err != nil || out != want {
		t.Errorf("searxng: %v\n%s", err, out)
	}

	br, err := websearch.New("brave", srv.URL+"/brave", func() (string, error) { return key, nil })
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, NewWebSearch(br), env, `{"query":"x","count":1}`); err != nil || !strings.Contains(out, "Brave hit") || !strings.Contains(out, "found it") {
		t.Errorf("brave: %v\n%s", err, out)
	}
	// A rejected key echoed by the service is redacted.
	_, err = run(t, NewWebSearch(br), env, `{"query":"x","count":2}`)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("rejected key: %v", err)
	}
	noKey, _ := websearch.New("brave", srv.URL+"/brave", func() (string, error) { return "", errors.New("none") })
	if _, err := run(t, NewWebSearch(noKey), env, `{"query":"x"}`); !errors.Is(err, websearch.ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
	if _, err := websearch.New("google", "", nil); err == nil {
		t.Error("an unknown backend was accepted")
	}
}
