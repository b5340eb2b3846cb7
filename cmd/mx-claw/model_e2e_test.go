package main_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// fileBackend keeps the tests away from any real keyring.
const fileBackend = "MX_CLAW_SECRET_BACKEND=file"

// runEnv is env.run with extra environment variables.
func (e *env) runEnv(stdin string, extra []string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := exitCode(err)
	if code < 0 {
		e.t.Fatalf("run mx-claw %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// model runs `mx-claw ARGS` with the file secret backend and wants exit 0.
func (e *env) model(stdin string, args ...string) result {
	e.t.Helper()
	r := e.runEnv(stdin, []string{fileBackend}, args...)
	if r.code != 0 {
		e.t.Fatalf("mx-claw %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func (e *env) config() map[string]any {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.home, "config.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) providerField(c map[string]any, provider, field string) any {
	p, _ := c["providers"].(map[string]any)[provider].(map[string]any)
	return p[field]
}

func randomKey(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

func TestModelConfigureThenRunUsesStoredKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("answered with the stored key"))
	key := randomKey(t, "sk-e2e-")
	r := e.model(key+"\n", "model", "configure", "gw", "--base-url", e.srv.URL()+"/", "--models", "fake-model, other-model",
		"--default", "fake-model", "--api-key-stdin")
	if !strings.Contains(r.stdout, "API Key: [configured] (file)") || !strings.Contains(r.stdout, "gw is ready") {
		t.Errorf("configure output:\n%s", r.stdout)
	}
	c := e.config()
	if c["activeProvider"] != "gw" || e.providerField(c, "gw", "baseURL") != e.srv.URL() || e.providerField(c, "gw", "requiresApiKey") != true {
		t.Errorf("config after configure: %v", c)
	}
	for _, name := range []string{"config.json", "secrets.json", "secrets.key"} {
		fi, err := os.Stat(filepath.Join(e.home, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", name, err, fi.Mode().Perm())
		}
	}

	run := e.runEnv("", []string{fileBackend}, "run", "say hi")
	if run.code != 0 || !strings.Contains(run.stdout, "answered with the stored key") {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer "+key || reqs[0].Chat.Model != "fake-model" {
		t.Fatalf("chat request: model %q, Authorization %q", reqs[0].Chat.Model, reqs[0].Header.Get("Authorization"))
	}

	st := e.model("", "model", "status")
	if !strings.Contains(st.stdout, "Secret store:   file ("+e.home) || !strings.Contains(st.stdout, "API Key:   [configured] (file)") {
		t.Errorf("status:\n%s", st.stdout)
	}
	doc := e.model("", "doctor")
	for _, want := range []string{"Home:", e.home, "Config:", "Secret store:   file (", "Active model:   gw/fake-model (ready)", "key [configured] (file)"} {
		if !strings.Contains(doc.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, doc.stdout)
		}
	}
	for _, out := range []string{r.stdout, r.stderr, run.stdout, run.stderr, st.stdout, doc.stdout} {
		if strings.Contains(out, key) {
			t.Errorf("the key was printed:\n%s", out)
		}
	}

	// A key set later through `set --stdin` replaces it; the env wins over
	// the store when set.
	key2 := randomKey(t, "sk-e2e-second-")
	e.model(key2, "model", "set", "gw", "api-key", "--stdin")
	e.srv.Enqueue(llmtest.Text("second"))
	e.model("", "run", "again")
	e.srv.Enqueue(llmtest.Text("third"))
	if r := e.runEnv("", []string{fileBackend, "MX_CLAW_API_KEY_GW=sk-from-env-333"}, "run", "env wins"); r.code != 0 {
		t.Fatalf("run with env key: %d %s", r.code, r.stderr)
	}
	reqs = e.srv.ChatRequests()
	if got := reqs[1].Header.Get("Authorization"); got != "Bearer "+key2 {
		t.Errorf("after set: Authorization %q", got)
	}
	if got := reqs[2].Header.Get("Authorization"); got != "Bearer sk-from-env-333" {
		t.Errorf("with the env variable: Authorization %q", got)
	}
}

func TestModelScriptErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"wizard without a terminal", "", []string{"model"}, []string{"not a terminal", "--base-url URL --models a,b --default a"}},
		{"configure without flags", "", []string{"model", "configure", "gw"}, []string{"not a terminal", "--api-key-stdin | --no-api-key"}},
		{"configure without a name", "", []string{"model", "configure", "--models", "a"}, []string{"name the provider"}},
		{"new provider without base URL", "", []string{"model", "configure", "newp", "--models", "a"}, []string{"--base-url"}},
		{"built-in without key", "", []string{"model", "configure", "openai", "--models", "gpt-4o"}, []string{"needs an API key", "--api-key-stdin", "OPENAI_API_KEY"}},
		{"empty key on stdin", "\n", []string{"model", "configure", "newp", "--base-url", "http://127.0.0.1:1/v1", "--models", "a", "--api-key-stdin"}, []string{"no API key on standard input"}},
		{"both key flags", "k", []string{"model", "configure", "newp", "--base-url", "http://127.0.0.1:1/v1", "--models", "a", "--api-key-stdin", "--no-api-key"}, []string{"cannot be used together"}},
		{"configured provider without --overwrite", "", []string{"model", "configure", "fake", "--models", "a"}, []string{"already configured", "--overwrite"}},
		{"bad base URL", "", []string{"model", "configure", "newp", "--base-url", "example.com", "--models", "a", "--no-api-key"}, []string{"http://"}},
		{"default not in models", "", []string{"model", "configure", "newp", "--base-url", "http://127.0.0.1:1/v1", "--models", "a", "--default", "b", "--no-api-key"}, []string{`default model "b"`}},
		{"set without terminal", "", []string{"model", "set", "fake", "api-key"}, []string{"--stdin"}},
		{"set another field", "", []string{"model", "set", "fake", "base-url"}, []string{"only the API key"}},
		{"switch without terminal", "", []string{"model", "switch"}, []string{"model use PROVIDER MODEL --session ID"}},
		{"use without a session", "", []string{"model", "use", "fake", "other-model"}, []string{"default PROVIDER/MODEL"}},
		{"unknown session", "", []string{"model", "use", "fake", "other-model", "--session", "nope"}, []string{"session nope does not exist"}},
		{"typo", "", []string{"model", "stauts"}, []string{`unknown command "stauts"`}},
		{"unknown default", "", []string{"model", "default", "fake/nope"}, []string{`unknown model "nope"`, "add-model fake nope"}},
		{"bad backend", "", []string{"model", "status"}, []string{"MX_CLAW_SECRET_BACKEND"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			before, _ := os.ReadFile(filepath.Join(e.home, "config.json"))
			extra := []string{fileBackend}
			if tt.name == "bad backend" {
				extra = []string{"MX_CLAW_SECRET_BACKEND=vault"}
			}
			r := e.runEnv(tt.stdin, extra, tt.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
			after, _ := os.ReadFile(filepath.Join(e.home, "config.json"))
			if string(before) != string(after) {
				t.Error("config changed")
			}
			if _, err := os.Stat(filepath.Join(e.home, "secrets.json")); err == nil {
				t.Error("a key was stored")
			}
		})
	}
}

func TestModelSessionSwitchAndDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	r := e.model("", "run", "--json", "start")
	id := sessionOf(t, r.events(t))
	before, _ := os.ReadFile(filepath.Join(e.home, "config.json"))

	use := e.model("", "model", "use", "fake", "other-model", "--session", id)
	if !strings.Contains(use.stdout, "Session model: fake/other-model (this session only)") {
		t.Errorf("use output %q", use.stdout)
	}
	after, _ := os.ReadFile(filepath.Join(e.home, "config.json"))
	if string(before) != string(after) {
		t.Error("a session-only switch changed config.json")
	}
	if d := e.show(id); d.Session.Model != "fake/other-model" {
		t.Errorf("stored session model %q", d.Session.Model)
	}
	list := e.model("", "model", "list", "--session", id)
	if !strings.Contains(list.stdout, "fake/other-model · current") || !strings.Contains(list.stdout, "fake/fake-model · default") {
		t.Errorf("list:\n%s", list.stdout)
	}
	e.model("", "run", "--session", id, "next")
	if reqs := e.srv.ChatRequests(); reqs[1].Chat.Model != "other-model" {
		t.Errorf("the session's next turn used %q", reqs[1].Chat.Model)
	}
	// The shorthand form, and a provider change refused with the
	// article's message.
	e.model("", "model", "fake-model", "--session", id)
	if d := e.show(id); d.Session.Model != "fake/fake-model" {
		t.Errorf("after `model fake-model`: %q", d.Session.Model)
	}
	e.model("sk-x-1234567\n", "model", "configure", "gw", "--base-url", e.srv.URL(), "--models", "g1", "--api-key-stdin")
	bad := e.runEnv("", []string{fileBackend}, "model", "use", "gw", "g1", "--session", id)
	if bad.code != 2 || !strings.Contains(bad.stderr, "Temporary model switch cannot change provider (fake -> gw). Use mx-claw model default to change the default provider.") {
		t.Errorf("cross-provider use: exit %d, %q", bad.code, bad.stderr)
	}

	// default persists.
	e.model("", "model", "default", "fake/other-model")
	c := e.config()
	if c["activeProvider"] != "fake" || e.providerField(c, "fake", "model") != "other-model" {
		t.Errorf("config after default: %v", c)
	}
	e.model("", "run", "a new session")
	reqs := e.srv.ChatRequests()
	if got := reqs[len(reqs)-1].Chat.Model; got != "other-model" {
		t.Errorf("a new session used %q after default", got)
	}
}

func TestModelRefreshAndAddModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetModels("fake-model", "discovered-1", "discovered-2")
	e.model("", "model", "add-model", "fake", "by-hand")
	r := e.model("", "model", "refresh", "fake")
	if !strings.Contains(r.stdout, "added 2 models from /models: discovered-1, discovered-2") {
		t.Errorf("refresh output %q", r.stdout)
	}
	models, _ := e.providerField(e.config(), "fake", "models").([]any)
	var got []string
	for _, m := range models {
		got = append(got, m.(string))
	}
	if strings.Join(got, ",") != "fake-model,other-model,by-hand,discovered-1,discovered-2" {
		t.Errorf("models after refresh: %v", got)
	}
	skip := e.model("", "model", "refresh", "openai")
	if skip.stdout != "Refresh skipped: openai needs configuration\n" {
		t.Errorf("refresh of a provider that is not ready: %q", skip.stdout)
	}
}

// TestAPIKeyNeverLeaks is issue 5's leak test: a provider configured with
// a recognisable key; a turn that fails (the gateway echoes the key in its
// 401), a turn that succeeds and runs a command printing its environment,
// and the status commands. The key must appear in no output, no event, no
// file under the home (the secret store's own files aside) and not in the
// command's environment, while every chat request did carry it.
func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := randomKey(t, "sk-LEAKCHECK-")
	var outputs []string
	add := func(r result) result {
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}

	add(e.model(key+"\n", "model", "configure", "leaky", "--base-url", e.srv.URL(), "--models", "fake-model,other-model",
		"--default", "fake-model", "--api-key-stdin"))

	echo := llmtest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + key +
		`. You can find your API key at https://example.invalid.","type":"invalid_request_error","code":"invalid_api_key"}}`}
	e.srv.Enqueue(echo)
	failed := add(e.runEnv("", []string{fileBackend}, "run", "--json", "first turn fails"))
	if failed.code != 1 {
		t.Fatalf("failing turn: exit %d\n%s", failed.code, failed.stderr)
	}
	id := sessionOf(t, failed.events(t))
	if !strings.Contains(failed.stdout+failed.stderr, "[redacted]") {
		t.Errorf("the provider's echo of the key did not reach the error redacted:\n%s\n%s", failed.stdout, failed.stderr)
	}
	e.srv.Enqueue(echo)
	if r := add(e.runEnv("", []string{fileBackend}, "run", "--session", id, "fails again, plain output")); r.code != 1 || !strings.Contains(r.stderr, "[redacted]") {
		t.Errorf("plain failing turn: exit %d, stderr %q", r.code, r.stderr)
	}
	// The database keeps the failure, redacted.
	if d := e.show(id); !strings.Contains(d.Session.LastError, "[redacted]") {
		t.Errorf("stored last error %q", d.Session.LastError)
	}

	e.srv.Enqueue(
		llmtest.Call("run_command", `{"command":"env > child-env.txt; env"}`),
		llmtest.Text("done"),
	)
	ok := add(e.runEnv("", []string{fileBackend}, "run", "--json", "--yolo", "--session", id, "second turn works"))
	if ok.code != 0 {
		t.Fatalf("succeeding turn: exit %d\n%s", ok.code, ok.stderr)
	}
	searchKey, searchChildEnv := webSearchTurn(t, e, id, add)
	for _, args := range [][]string{
		{"model", "status"}, {"model", "list", "--session", id}, {"doctor"}, {"model", "refresh", "leaky"},
		{"sessions", "show", id, "--json"}, {"sessions", "list", "--json"},
	} {
		add(e.model("", args...))
	}

	forms := map[string]string{
		"plain":  key,
		"base64": base64.StdEncoding.EncodeToString([]byte(key)),
		"hex":    hex.EncodeToString([]byte(key)),
		// The web_search backend's key (issue 21) follows the same rules.
		"search key":        searchKey,
		"search key base64": base64.StdEncoding.EncodeToString([]byte(searchKey)),
	}
	for i, out := range outputs {
		for form, v := range forms {
			if strings.Contains(out, v) {
				t.Errorf("output %d holds the key (%s):\n%s", i, form, out)
			}
		}
	}
	// Every file of the home; the store's own files may hold ciphertext
	// only.
	err := filepath.WalkDir(e.home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		forbidden := forms
		if base := filepath.Base(path); base == "secrets.json" || base == "secrets.key" {
			forbidden = map[string]string{"plain": key}
		}
		for form, v := range forbidden {
			if strings.Contains(string(data), v) {
				t.Errorf("%s holds the key (%s)", path, form)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The command's environment, as it wrote it and as the model saw it.
	childEnv, err := os.ReadFile(filepath.Join(e.ws, "child-env.txt"))
	if err != nil || !strings.Contains(string(childEnv), "PATH=") {
		t.Fatalf("the command did not run: %v", err)
	}
	if strings.Contains(string(childEnv)+searchChildEnv, key) || strings.Contains(string(childEnv)+searchChildEnv, "MX_CLAW_") ||
		strings.Contains(searchChildEnv, searchKey) {
		t.Errorf("the command's environment holds the key or mx-claw settings:\n%s", childEnv)
	}
	reqs := e.srv.ChatRequests()
	for i, req := range reqs {
		if string(req.Body) != "" && strings.Contains(string(req.Body), key) {
			t.Errorf("chat request %d carries the key in its body", i)
		}
		// The key is really used: every request authenticates with it.
		if got := req.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("chat request %d: Authorization %q", i, got)
		}
	}
	if len(reqs) < 4 {
		t.Errorf("%d chat requests, want at least 4", len(reqs))
	}
}
