package modelcmd

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// twoProviders has deepseek active (ready through an env key in the
// fixtures below) and a configured custom provider.
const twoProviders = `{"version":1,"activeProvider":"deepseek","providers":{
"deepseek":{"name":"deepseek","kind":"builtin","baseURL":"https://api.deepseek.com/v1","model":"deepseek-flash","models":["deepseek-flash","deepseek-v4-pro"],"requiresApiKey":true,"configured":true},
"gw":{"name":"gw","kind":"custom","baseURL":"http://127.0.0.1:9/v1","model":"m1","models":["m1","m2"],"requiresApiKey":false,"configured":true}}}`

func TestSwitchMarksTheSessionModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, twoProviders, "DEEPSEEK_API_KEY", "sk-ds-1234567890")
	sess := &fakeSession{model: "deepseek/deepseek-flash"}
	f.h.Session = sess
	before := f.configFile()

	s := f.prompt(sel("deepseek-v4-pro"))
	if err := f.h.Run(ctx, []string{"switch"}); err != nil {
		t.Fatal(err)
	}
	if sess.model != "deepseek/deepseek-v4-pro" {
		t.Fatalf("session model %q", sess.model)
	}
	if m := s.menus[0]; !m[0].Current || m[0].Label != "deepseek-flash · current" || m[1].Current {
		t.Errorf("first menu %+v", m)
	}
	// Opened again, the menu marks the session's model, not the default
	// (the article's "current" bug).
	s = f.prompt(sel("deepseek-flash"))
	if err := f.h.Switch(ctx); err != nil {
		t.Fatal(err)
	}
	if m := s.menus[0]; m[0].Current || !m[1].Current || m[1].Label != "deepseek-v4-pro · current" {
		t.Errorf("second menu %+v", m)
	}
	if f.configFile() != before {
		t.Error("switch changed config.json")
	}
	if f.cfg.Providers["deepseek"].Model != "deepseek-flash" {
		t.Error("switch changed the default in the snapshot")
	}
	if !strings.Contains(f.out.String(), "this session only") {
		t.Errorf("output %s", f.out)
	}
}

func TestSessionOnlyCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name      string
		session   string
		args      []string
		wantModel string
		wantErr   string
	}{
		{"bare model of the session's provider", "deepseek/deepseek-flash", []string{"deepseek-v4-pro"}, "deepseek/deepseek-v4-pro", ""},
		{"full id", "deepseek/deepseek-flash", []string{"deepseek/deepseek-v4-pro"}, "deepseek/deepseek-v4-pro", ""},
		{"use", "", []string{"use", "deepseek", "deepseek-v4-pro"}, "deepseek/deepseek-v4-pro", ""},
		{"use on a session of another provider", "gw/m1", []string{"use", "gw", "m2"}, "gw/m2", ""},
		{"use cannot change provider", "deepseek/deepseek-flash", []string{"use", "gw", "m2"}, "",
			"Temporary model switch cannot change provider (deepseek -> gw). Use /model default to change the default provider."},
		{"bare id cannot change provider", "", []string{"gw/m1"}, "", "cannot change provider (deepseek -> gw)"},
		{"unknown model", "", []string{"use", "deepseek", "nope"}, "", `unknown model "nope" for provider deepseek (known: deepseek-flash, deepseek-v4-pro); add it with ` + "`/model add-model deepseek nope`"},
		{"unknown provider", "", []string{"use", "zzz", "m"}, "", `unknown provider "zzz"`},
		{"unknown word", "", []string{"frobnicate", "x", "y"}, "", "unknown model command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, twoProviders, "DEEPSEEK_API_KEY", "sk-ds-1234567890")
			f.h.Prefix = "/model"
			sess := &fakeSession{model: tt.session}
			f.h.Session = sess
			before := f.configFile()
			err := f.h.Run(ctx, tt.args)
			if tt.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a UsageError with %q", err, tt.wantErr)
				}
				if sess.sets != 0 {
					t.Error("the session changed")
				}
			} else if err != nil || sess.model != tt.wantModel {
				t.Fatalf("err %v, session %q; want %q", err, sess.model, tt.wantModel)
			}
			if f.configFile() != before {
				t.Error("a session-only command changed config.json")
			}
		})
	}
	f := newFixture(t, twoProviders)
	for _, args := range [][]string{{"switch"}, {"use", "gw", "m1"}, {"m1"}} {
		if err := f.h.Run(ctx, args); err == nil || !strings.Contains(err.Error(), "default PROVIDER/MODEL") {
			t.Errorf("%v without a session: %v", args, err)
		}
	}
}

func TestDefaultPersists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, twoProviders)
	sess := &fakeSession{model: "deepseek/deepseek-flash"}
	f.h.Session = sess
	if err := f.h.Run(ctx, []string{"default", "gw/m2"}); err != nil {
		t.Fatal(err)
	}
	c := f.reload()
	if c.ActiveProvider != "gw" || c.Providers["gw"].Model != "m2" {
		t.Errorf("saved: active %q, model %q", c.ActiveProvider, c.Providers["gw"].Model)
	}
	if sess.model != "gw/m2" || !strings.Contains(f.out.String(), "Default model: gw/m2") {
		t.Errorf("session %q, output %s", sess.model, f.out)
	}
	// "default PROVIDER MODEL" and a bare model of the active provider.
	if err := f.h.Run(ctx, []string{"default", "deepseek", "deepseek-v4-pro"}); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Run(ctx, []string{"default", "deepseek-flash"}); err != nil {
		t.Fatal(err)
	}
	if c := f.reload(); c.ActiveProvider != "deepseek" || c.Providers["deepseek"].Model != "deepseek-flash" {
		t.Errorf("saved: %q %q", c.ActiveProvider, c.Providers["deepseek"].Model)
	}
	// The not-ready provider is accepted with a note naming the fix.
	if !strings.Contains(f.out.String(), "Note: provider deepseek needs an API key") {
		t.Errorf("output lacks the readiness note:\n%s", f.out)
	}
	before := f.configFile()
	if err := f.h.Run(ctx, []string{"default", "gw/nope"}); err == nil || f.configFile() != before {
		t.Errorf("unknown model: %v", err)
	}
}

func TestStatusAndList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const key = "sk-status-abcdef0123456789"
	f := newFixture(t, twoProviders)
	if _, err := f.secrets.Set(ctx, "deepseek", key); err != nil {
		t.Fatal(err)
	}
	f.h.Session = &fakeSession{model: "deepseek/deepseek-v4-pro"}
	if err := f.h.Run(ctx, []string{"status"}); err != nil {
		t.Fatal(err)
	}
	out := f.out.String()
	for _, want := range []string{
		"Default model:  deepseek/deepseek-flash",
		"Session model:  deepseek/deepseek-v4-pro",
		"Secret store:   file (" + f.home,
		"deepseek (builtin, active)",
		"API Key:   [configured] (file)",
		"API Key:   not needed",
		"API Key:   not set",
		"Status:    ready",
		"Status:    needs configuration: provider openai needs an API key",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	noLeak(t, "status", out, key)

	f.out.Reset()
	if err := f.h.Run(ctx, []string{"list"}); err != nil {
		t.Fatal(err)
	}
	out = f.out.String()
	for _, want := range []string{
		"deepseek (ready)\n  deepseek/deepseek-flash · default\n  deepseek/deepseek-v4-pro · current\n",
		"gw (ready)\n  gw/m1\n  gw/m2\n",
		"ollama (needs configuration)\n  no models\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	// Without a session the default is current.
	f.out.Reset()
	f.h.Session = nil
	f.h.List(ctx)
	if !strings.Contains(f.out.String(), "deepseek/deepseek-flash · current") {
		t.Errorf("list without a session:\n%s", f.out)
	}
}

func TestAddModelAndSetKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, twoProviders)
	if err := f.h.Run(ctx, []string{"add-model", "ollama", "qwen2.5-coder"}); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Run(ctx, []string{"add-model", "gw", "m3"}); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Run(ctx, []string{"add-model", "gw", "m3"}); err != nil {
		t.Fatal(err)
	}
	c := f.reload()
	if p := c.Providers["ollama"]; p.Model != "qwen2.5-coder" || len(p.Models) != 1 {
		t.Errorf("ollama %+v", p)
	}
	if got := strings.Join(c.Providers["gw"].Models, ","); got != "m1,m2,m3" {
		t.Errorf("gw models %s", got)
	}
	if !strings.Contains(f.out.String(), "gw/m3 is already listed") {
		t.Errorf("output %s", f.out)
	}
	for _, bad := range [][]string{{"add-model", "gw", "a b"}, {"add-model", "nope", "m"}, {"add-model", "gw"}} {
		var ue *UsageError
		if err := f.h.Run(ctx, bad); !errors.As(err, &ue) {
			t.Errorf("%v: %v", bad, err)
		}
	}

	// set PROVIDER api-key: hidden prompt.
	const key = "sk-set-key-0123456789"
	s := f.prompt(secretA(key))
	if err := f.h.Run(ctx, []string{"set", "deepseek", "api-key"}); err != nil {
		t.Fatal(err)
	}
	s.done()
	if f.storedKey("deepseek") != key || !strings.Contains(s.labels[0], "input hidden") {
		t.Errorf("stored %q, prompt %q", f.storedKey("deepseek"), s.labels[0])
	}
	// The old form with the key as an argument still works.
	const key2 = "sk-set-key-argument-987654"
	f.h.Prompt = nil
	if err := f.h.Run(ctx, []string{"set", "deepseek", "api-key", key2}); err != nil {
		t.Fatal(err)
	}
	if f.storedKey("deepseek") != key2 {
		t.Error("old form did not store the key")
	}
	out := f.out.String()
	noLeak(t, "output", out, key)
	noLeak(t, "output", out, key2)
	if !strings.Contains(out, "Stored the API key of deepseek in file") || !strings.Contains(out, "history") {
		t.Errorf("output %s", out)
	}
	noLeak(t, "config.json", f.configFile(), key2)
	// Empty hidden input changes nothing; a cancelled one neither.
	f.prompt(secretA(""))
	if err := f.h.SetAPIKey(ctx, "deepseek", ""); err != nil || f.storedKey("deepseek") != key2 {
		t.Errorf("empty input: %v", err)
	}
	f.prompt(cancelAt("secret"))
	if err := f.h.SetAPIKey(ctx, "deepseek", ""); !errors.Is(err, ErrCancelled) || f.storedKey("deepseek") != key2 {
		t.Errorf("cancelled input: %v", err)
	}
	if err := f.h.Run(ctx, []string{"set", "deepseek", "base-url"}); err == nil {
		t.Error("set of an unknown field accepted")
	}
}
