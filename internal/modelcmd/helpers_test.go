package modelcmd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

// step is one scripted answer: kind is "select", "input", "secret" or
// "confirm"; err, if set, is returned instead of the answer.
type step struct {
	kind, answer string
	err          error
}

func sel(a string) step     { return step{kind: "select", answer: a} }
func input(a string) step   { return step{kind: "input", answer: a} }
func secretA(a string) step { return step{kind: "secret", answer: a} }
func confirm(yes bool) step {
	if yes {
		return step{kind: "confirm", answer: "y"}
	}
	return step{kind: "confirm", answer: "n"}
}
func cancelAt(kind string) step { return step{kind: kind, err: ErrCancelled} }

// script is a Prompter that plays steps in order and fails the test on any
// question it was not told to expect.
type script struct {
	t     *testing.T
	steps []step
	// menus records each Select's options, labels records every question.
	menus  [][]Option
	labels []string
}

func (s *script) next(kind, label string) step {
	s.t.Helper()
	s.labels = append(s.labels, label)
	if len(s.steps) == 0 {
		s.t.Fatalf("unexpected %s %q", kind, label)
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	if st.kind != kind {
		s.t.Fatalf("asked %s %q, script expected a %s", kind, label, st.kind)
	}
	return st
}

func (s *script) Select(ctx context.Context, title string, options []Option) (string, error) {
	s.menus = append(s.menus, options)
	st := s.next("select", title)
	if st.err != nil {
		return "", st.err
	}
	if !slices.ContainsFunc(options, func(o Option) bool { return o.Value == st.answer }) {
		s.t.Fatalf("menu %q has no option %q: %+v", title, st.answer, options)
	}
	return st.answer, nil
}

func (s *script) Input(ctx context.Context, label, def string) (string, error) {
	st := s.next("input", label)
	if st.err != nil {
		return "", st.err
	}
	if st.answer == "" {
		return def, nil
	}
	return st.answer, nil
}

func (s *script) Secret(ctx context.Context, label string) (string, error) {
	st := s.next("secret", label)
	return st.answer, st.err
}

func (s *script) Confirm(ctx context.Context, q string, def bool) (bool, error) {
	st := s.next("confirm", q)
	if st.err != nil {
		return false, st.err
	}
	return st.answer == "y", nil
}

func (s *script) done() {
	s.t.Helper()
	if len(s.steps) > 0 {
		s.t.Errorf("%d scripted answers left: %+v", len(s.steps), s.steps)
	}
}

// fakeSession is a session in memory.
type fakeSession struct {
	model string
	sets  int
}

func (f *fakeSession) Model() string { return f.model }
func (f *fakeSession) SetModel(ctx context.Context, id string) error {
	f.model = id
	f.sets++
	return nil
}

// fixture is a home with a config, a file-backed secret chain and a
// handler writing to out.
type fixture struct {
	t       *testing.T
	home    string
	cfg     *config.Config
	secrets *secret.Chain
	out     *bytes.Buffer
	h       *Handler
}

// newFixture loads home (writing configJSON first when it is not "") and
// builds a handler over it. env is the environment the chain sees.
func newFixture(t *testing.T, configJSON string, env ...string) *fixture {
	t.Helper()
	home := t.TempDir()
	if configJSON != "" {
		if err := os.WriteFile(filepath.Join(home, config.FileName), []byte(configJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	chain, err := secret.New(secret.Options{
		Home: home, Backend: secret.BackendFile, EnvVars: config.KeyEnvVars,
		Getenv: func(k string) string { return vars[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, home: home, cfg: cfg, secrets: chain, out: &bytes.Buffer{}}
	f.h = &Handler{Config: cfg, Secrets: chain, Out: f.out, HTTP: &http.Client{Transport: loopbackOnly{}}}
	return f
}

// loopbackOnly sends requests to loopback servers and refuses any other:
// the tests stay offline even when a wizard lists a real provider's models.
type loopbackOnly struct{}

func (loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if ip := net.ParseIP(r.URL.Hostname()); ip == nil || !ip.IsLoopback() {
		return nil, errors.New("offline test: no network")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (f *fixture) prompt(steps ...step) *script {
	s := &script{t: f.t, steps: steps}
	f.h.Prompt = s
	return s
}

func (f *fixture) configFile() string {
	data, err := os.ReadFile(filepath.Join(f.home, config.FileName))
	if err != nil {
		return ""
	}
	return string(data)
}

func (f *fixture) reload() *config.Config {
	f.t.Helper()
	c, err := config.Load(f.home)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fixture) storedKey(provider string) string {
	v, _, _ := f.secrets.Get(context.Background(), provider)
	return v
}

// noLeak fails if text holds key or a recognisable piece of it.
func noLeak(t *testing.T, what, text, key string) {
	t.Helper()
	for _, piece := range []string{key, key[:8], key[len(key)-6:]} {
		if strings.Contains(text, piece) {
			t.Errorf("%s shows (part of) the key %q:\n%s", what, piece, text)
		}
	}
}

// configured is a config with a ready custom provider "gw" at url.
func configured(url string) string {
	return `{"version":1,"activeProvider":"gw","providers":{"gw":{"name":"gw","kind":"custom","baseURL":"` + url +
		`","model":"m1","models":["m1","m2"],"apiKey":"","requiresApiKey":false,"configured":true}}}`
}
