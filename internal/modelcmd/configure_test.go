package modelcmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
)

const wizKey = "sk-wizard-0123456789abcdef"

func TestWizardSavesOnceAtTheEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	sess := &fakeSession{}
	f.h.Session = sess
	s := f.prompt(
		sel("deepseek"),
		input(""), // keep the built-in base URL
		secretA(wizKey),
		input("deepseek-chat, deepseek-reasoner, deepseek-v4-pro"), // the list cannot be fetched offline
		sel("deepseek-reasoner"),
	)
	if err := f.h.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s.done()
	// The provider menu comes first and names the built-ins, offline.
	var names []string
	for _, o := range s.menus[0] {
		names = append(names, o.Value)
	}
	for _, want := range []string{"openai", "deepseek", "ollama", newProviderChoice} {
		if !slices.Contains(names, want) {
			t.Errorf("provider menu lacks %q: %v", want, names)
		}
	}
	if !strings.Contains(s.labels[2], "input hidden") {
		t.Errorf("key prompt %q does not say the input is hidden", s.labels[2])
	}
	c := f.reload()
	p := c.Providers["deepseek"]
	if c.ActiveProvider != "deepseek" || p.Model != "deepseek-reasoner" || !p.Configured || len(p.Models) != 3 || p.BaseURL != "https://api.deepseek.com/v1" {
		t.Errorf("saved config: active %q, %+v", c.ActiveProvider, p)
	}
	if got := f.storedKey("deepseek"); got != wizKey {
		t.Errorf("stored key %q", got)
	}
	if sess.model != "deepseek/deepseek-reasoner" {
		t.Errorf("session model %q", sess.model)
	}
	noLeak(t, "config.json", f.configFile(), wizKey)
	noLeak(t, "output", f.out.String(), wizKey)
	if !strings.Contains(f.out.String(), "API Key: [configured] (file)") || !strings.Contains(f.out.String(), "deepseek is ready") {
		t.Errorf("output:\n%s", f.out)
	}
	// The snapshot changed with the file.
	if f.cfg.ActiveProvider != "deepseek" || f.cfg.Providers["deepseek"].Model != "deepseek-reasoner" {
		t.Error("the in-process snapshot was not updated")
	}
}

// TestWizardCancelSavesNothing cancels at each step in turn.
func TestWizardCancelSavesNothing(t *testing.T) {
	t.Parallel()
	full := []step{sel("openai"), input("https://gw.example/v1"), secretA(wizKey), input("a, b"), sel("b")}
	for i := range full {
		t.Run(full[i].kind+"-"+string(rune('0'+i)), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "")
			sess := &fakeSession{model: "x/y"}
			f.h.Session = sess
			steps := slices.Clone(full[:i])
			steps = append(steps, cancelAt(full[i].kind))
			s := f.prompt(steps...)
			err := f.h.Run(context.Background(), []string{"configure"})
			if !errors.Is(err, ErrCancelled) {
				t.Fatalf("err = %v, want ErrCancelled", err)
			}
			s.done()
			if _, err := os.Stat(filepath.Join(f.home, config.FileName)); err == nil {
				t.Error("config.json was written")
			}
			if _, err := os.Stat(filepath.Join(f.home, secret.FileName)); err == nil {
				t.Error("a key was stored")
			}
			if sess.sets != 0 || f.cfg.ActiveProvider != "" {
				t.Error("the session or the snapshot changed")
			}
		})
	}
}

func TestConfigureOverwriteConfirm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("configured provider asks, no keeps everything", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, configured("http://127.0.0.1:1/v1"))
		before := f.configFile()
		s := f.prompt(confirm(false))
		if err := f.h.Run(ctx, []string{"configure", "gw"}); err != nil {
			t.Fatal(err)
		}
		s.done()
		if f.configFile() != before || !strings.Contains(f.out.String(), "Nothing changed") {
			t.Errorf("declined overwrite changed the config or said %q", f.out)
		}
	})
	t.Run("configured provider asks, yes replaces it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, configured("http://127.0.0.1:1/v1"))
		s := f.prompt(confirm(true), input("http://127.0.0.1:2/v1/"), secretA(""), input(""), sel("m2"))
		if err := f.h.Run(ctx, []string{"configure", "gw"}); err != nil {
			t.Fatal(err)
		}
		s.done()
		p := f.reload().Providers["gw"]
		if p.BaseURL != "http://127.0.0.1:2/v1" || p.Model != "m2" || strings.Join(p.Models, ",") != "m1,m2" || p.RequiresAPIKey {
			t.Errorf("provider after overwrite: %+v", p)
		}
		if !strings.Contains(s.labels[2], "empty if none is needed") {
			t.Errorf("key prompt %q", s.labels[2])
		}
	})
	t.Run("unconfigured built-in does not ask", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "")
		s := f.prompt(input(""), secretA(wizKey), input(""), sel("gpt-4o"))
		if err := f.h.Run(ctx, []string{"configure", "openai"}); err != nil {
			t.Fatal(err)
		}
		s.done()
		if c := f.reload(); c.ActiveProvider != "openai" || c.Providers["openai"].Model != "gpt-4o" {
			t.Errorf("config: %+v", c.Providers["openai"])
		}
		// Non-interactive over a configured provider needs Overwrite.
		err := f.h.ConfigureWith(ctx, ConfigureInput{Provider: "openai", BaseURL: "https://x.example/v1", Models: []string{"a"}})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "already configured") {
			t.Errorf("ConfigureWith over a configured provider: %v", err)
		}
	})
	t.Run("a key is required by openai and asked until given", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "")
		s := f.prompt(input(""), secretA(""), secretA(" "), secretA(""), cancelAt("secret"))
		err := f.h.Run(ctx, []string{"configure", "openai"})
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("err = %v, want the user's cancel", err)
		}
		s.done()
		if f.configFile() != "" {
			t.Error("config written")
		}
		if n := strings.Count(f.out.String(), "needs an API key"); n != 3 {
			t.Errorf("asked again %d times:\n%s", n, f.out)
		}
	})
	t.Run("stored key is kept on empty input", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "")
		f.secrets.Set(ctx, "openai", wizKey)
		s := f.prompt(sel("openai"), input(""), secretA(""), input(""), sel("gpt-4.1"))
		if err := f.h.Wizard(ctx); err != nil {
			t.Fatal(err)
		}
		s.done()
		if !strings.Contains(s.labels[2], "empty keeps the current one") || f.storedKey("openai") != wizKey {
			t.Errorf("prompt %q; key %q", s.labels[2], f.storedKey("openai"))
		}
	})
	t.Run("new custom provider from the wizard", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "")
		s := f.prompt(sel(newProviderChoice), input("my-gw"), input("https://gw.example/api"), secretA(wizKey), input("x1,x2"), sel("x2"))
		if err := f.h.Wizard(ctx); err != nil {
			t.Fatal(err)
		}
		s.done()
		p := f.reload().Providers["my-gw"]
		if p == nil || p.Kind != config.KindCustom || !p.RequiresAPIKey || p.Model != "x2" {
			t.Fatalf("custom provider %+v", p)
		}
		noLeak(t, "config.json", f.configFile(), wizKey)
	})
	t.Run("bad answers are asked again", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			steps []step
			said  string
		}{
			{[]step{input("not a url"), input("https://api.deepseek.com/v1"), secretA(wizKey), input("m"), sel("m")}, "try again"},
			{[]step{input(""), secretA(wizKey), input(" , "), input("m"), sel("m")}, "At least one model name is needed"},
			{[]step{input(""), secretA(wizKey), input("a b"), input("a"), sel("a")}, "try again"},
		} {
			f := newFixture(t, "")
			s := f.prompt(tc.steps...)
			if err := f.h.Configure(ctx, "deepseek"); err != nil {
				t.Errorf("answers %+v: %v", tc.steps, err)
			}
			s.done()
			if !strings.Contains(f.out.String(), tc.said) || f.configFile() == "" {
				t.Errorf("answers %+v: output %q", tc.steps, f.out)
			}
		}
		f := newFixture(t, "")
		f.prompt(sel(newProviderChoice), input("bad/name"))
		if err := f.h.Wizard(ctx); err == nil {
			t.Error("a provider name with a slash was accepted")
		}
	})
	t.Run("no prompter", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "")
		for _, args := range [][]string{nil, {"configure", "openai"}, {"set", "openai", "api-key"}} {
			var ue *UsageError
			if err := f.h.Run(ctx, args); !errors.As(err, &ue) {
				t.Errorf("%v without a prompter: %v", args, err)
			}
		}
	})
}

func TestConfigureWith(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := ConfigureInput{Provider: "gw", BaseURL: "http://127.0.0.1:9/v1", Models: []string{"a", "b"}}
	tests := []struct {
		name    string
		env     []string
		prep    func(f *fixture)
		change  func(in *ConfigureInput)
		wantErr string
		check   func(t *testing.T, f *fixture)
	}{
		{name: "custom with key", change: func(in *ConfigureInput) { in.APIKey = wizKey; in.Default = "b" },
			check: func(t *testing.T, f *fixture) {
				p := f.reload().Providers["gw"]
				if !p.RequiresAPIKey || p.Model != "b" || f.storedKey("gw") != wizKey {
					t.Errorf("%+v key %q", p, f.storedKey("gw"))
				}
			}},
		{name: "custom without key needs none", check: func(t *testing.T, f *fixture) {
			if p := f.reload().Providers["gw"]; p.RequiresAPIKey || p.Model != "a" {
				t.Errorf("%+v", p)
			}
		}},
		{name: "no-api-key deletes a stored key", prep: func(f *fixture) { f.secrets.Set(ctx, "gw", wizKey) },
			change: func(in *ConfigureInput) { in.NoAPIKey = true },
			check: func(t *testing.T, f *fixture) {
				if f.storedKey("gw") != "" || f.reload().Providers["gw"].RequiresAPIKey {
					t.Error("key kept or still required")
				}
			}},
		{name: "reconfigure keeps the stored key", prep: func(f *fixture) { f.secrets.Set(ctx, "gw", wizKey) },
			check: func(t *testing.T, f *fixture) {
				if f.storedKey("gw") != wizKey || !f.reload().Providers["gw"].RequiresAPIKey {
					t.Error("stored key lost")
				}
			}},
		{name: "built-in openai without key", change: func(in *ConfigureInput) { in.Provider = "openai" }, wantErr: "needs an API key"},
		{name: "built-in openai with the env key", env: []string{"OPENAI_API_KEY", wizKey}, change: func(in *ConfigureInput) { in.Provider = "openai" },
			check: func(t *testing.T, f *fixture) {
				if !strings.Contains(f.out.String(), "[configured] (env:OPENAI_API_KEY)") {
					t.Errorf("output %s", f.out)
				}
				if _, err := os.Stat(filepath.Join(f.home, secret.FileName)); err == nil {
					t.Error("the env key was copied into the file store")
				}
			}},
		{name: "env key shadows the stored one", env: []string{"MX_CLAW_API_KEY_GW", "sk-env-shadow-999"}, change: func(in *ConfigureInput) { in.APIKey = wizKey },
			check: func(t *testing.T, f *fixture) {
				if !strings.Contains(f.out.String(), "Note: the key from env:MX_CLAW_API_KEY_GW is used before the one stored in file") {
					t.Errorf("output %s", f.out)
				}
			}},
		{name: "bad base URL", change: func(in *ConfigureInput) { in.BaseURL = "gw.example" }, wantErr: "http://"},
		{name: "credentials in the URL", change: func(in *ConfigureInput) { in.BaseURL = "https://u:sk-pw@gw.example" }, wantErr: "user name or password"},
		{name: "no models", change: func(in *ConfigureInput) { in.Models = nil }, wantErr: "at least one model"},
		{name: "default not listed", change: func(in *ConfigureInput) { in.Default = "c" }, wantErr: `default model "c"`},
		{name: "both key choices", change: func(in *ConfigureInput) { in.APIKey = "k-123"; in.NoAPIKey = true }, wantErr: "not both"},
		{name: "bad provider name", change: func(in *ConfigureInput) { in.Provider = "a b" }, wantErr: "provider name"},
		{name: "key with a line break", change: func(in *ConfigureInput) { in.APIKey = "sk-a\nb" }, wantErr: "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "", tt.env...)
			if tt.prep != nil {
				tt.prep(f)
			}
			in := base
			if tt.change != nil {
				tt.change(&in)
			}
			err := f.h.ConfigureWith(ctx, in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if f.configFile() != "" {
					t.Error("config written despite the error")
				}
				if in.APIKey != "" && strings.Contains(err.Error(), in.APIKey) {
					t.Error("the error shows the key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := f.reload(); c.ActiveProvider != in.Provider || !c.Providers[in.Provider].Configured {
				t.Errorf("active %q", c.ActiveProvider)
			}
			noLeak(t, "config.json", f.configFile(), wizKey)
			noLeak(t, "output", f.out.String(), wizKey)
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}
