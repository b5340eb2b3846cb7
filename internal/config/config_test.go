package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadMissingHasBuiltins(t *testing.T) {
	t.Parallel()
	c, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if c.Exists() {
		t.Error("Exists() = true for a missing file")
	}
	for _, name := range []string{"openai", "deepseek", "ollama"} {
		if _, ok := c.Providers[name]; !ok {
			t.Errorf("built-in provider %s missing", name)
		}
	}
	_, err = c.Resolve("")
	if err == nil || !strings.Contains(err.Error(), "mx-claw model configure") {
		t.Errorf("Resolve(\"\") on a missing config: %v, want a hint naming the command", err)
	}
}

func TestLoadBadFilesUntouched(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"corrupt JSON", `{"version":1,"providers":{`, "is not valid JSON"},
		{"newer version", `{"version":99}`, "newer than this mx-claw supports"},
		{"no version", `{"activeProvider":"x"}`, `no valid "version"`},
		{"null provider", `{"version":1,"providers":{"x":null}}`, `provider "x" is null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			path := filepath.Join(home, FileName)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(home)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Load: %v, want an error naming %s and saying %q", err, path, tt.want)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.content {
				t.Errorf("file changed to %q", got)
			}
		})
	}
}

func TestSaveRoundTripNeverWritesKeys(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	c, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	c.Providers["local"] = &Provider{Name: "local", Kind: KindCustom, BaseURL: "http://127.0.0.1:1/v1",
		Model: "m1", Models: []string{"m1", "m2"}, APIKey: "sk-secret-value", Configured: true}
	c.Providers["openai"].APIKey = "sk-other-secret"
	c.ActiveProvider = "local"
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("secret")) {
		t.Errorf("saved config contains a key: %s", data)
	}
	if !json.Valid(data) {
		t.Errorf("saved config is not JSON: %s", data)
	}
	for path, want := range map[string]os.FileMode{home: 0o700, filepath.Join(home, FileName): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	c2, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := c2.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	if ref.String() != "local/m1" || ref.Provider.APIKey != "" {
		t.Errorf("Resolve(\"\") = %s (key %q), want local/m1 without key", ref, ref.Provider.APIKey)
	}
	if ref.Provider.Kind != KindCustom {
		t.Errorf("kind %q, want custom", ref.Provider.Kind)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	c := &Config{Version: 1, ActiveProvider: "local", Providers: Builtins(), path: "cfg.json", exists: true}
	c.Providers["local"] = &Provider{Name: "local", BaseURL: "http://x/v1", Model: "m1", Models: []string{"m1", "m2"}}
	tests := []struct {
		id, want, wantErr string
	}{
		{"", "local/m1", ""},
		{"m2", "local/m2", ""},
		{"local/m2", "local/m2", ""},
		{"openai/gpt-4o", "openai/gpt-4o", ""},
		{"local/nope", "", `unknown model "nope" for provider local`},
		{"nope/m1", "", `unknown provider "nope"`},
		{"local/", "", "names no model"},
	}
	for _, tt := range tests {
		ref, err := c.Resolve(tt.id)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Resolve(%q) error %v, want %q", tt.id, err, tt.wantErr)
			}
			continue
		}
		if err != nil || ref.String() != tt.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tt.id, ref, err, tt.want)
		}
	}
}

func TestReady(t *testing.T) {
	t.Parallel()
	b := Builtins()
	tests := []struct {
		p       *Provider
		key     string
		wantErr string
	}{
		{b["openai"], "", "needs an API key; set OPENAI_API_KEY"},
		{b["openai"], "k", ""},
		{b["ollama"], "", "has no models"},
		{&Provider{Name: "x", Models: []string{"a"}, Model: "a"}, "", "has no base URL"},
		{&Provider{Name: "x", BaseURL: "u", Models: []string{"a"}}, "", "has no default model"},
	}
	for _, tt := range tests {
		err := Ready(tt.p, tt.key)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Ready(%s, %q) = %v, want %q", tt.p.Name, tt.key, err, tt.wantErr)
		}
	}
}

func TestKeyEnvVars(t *testing.T) {
	got := KeyEnvVars("my-gw.1")
	if got[len(got)-1] != "MX_CLAW_API_KEY_MY_GW_1" {
		t.Errorf("KeyEnvVars = %v", got)
	}
	t.Setenv("MX_CLAW_API_KEY_MY_GW_1", " k1 ")
	if EnvKey("my-gw.1") != "k1" {
		t.Errorf("EnvKey = %q", EnvKey("my-gw.1"))
	}
}

// TestLoadErrorsSayWhere: a syntax error names its line and column; a
// value of the wrong type names the field and is not called invalid JSON.
func TestLoadErrorsSayWhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, data, want, notWant string }{
		{"syntax", "{\n  \"version\": 1,\n  \"activeProvider\": \"x\"\n  \"maxIterations\": 3\n}", "line 4, column 3", ""},
		{"type", "{\n  \"version\": 1,\n  \"maxIterations\": \"ten\"\n}", "maxIterations (line 3, column 24) must be a number, not string", "not valid JSON"},
		{"nested type", `{"version": 1, "providers": {"p": {"models": "m1"}}}`, "providers.models (line 1, column 49) must be an array, not string", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			os.WriteFile(filepath.Join(home, FileName), []byte(tc.data), 0o600)
			_, err := Load(home)
			if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.notWant != "" && strings.Contains(err.Error(), tc.notWant)) {
				t.Errorf("Load = %v; want it to say %q", err, tc.want)
			}
		})
	}
}

func TestLoadRefusesHugeOrSpecialFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), bytes.Repeat([]byte(" "), 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home); err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Errorf("2 MiB config: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	home = t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(home, FileName)); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	if _, err := Load(home); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("config linked to /dev/zero: %v", err)
	}
}

// TestResumeInterruptedDefaultsOn: server.resumeInterrupted is on unless
// the file says false, and survives a save.
func TestResumeInterruptedDefaultsOn(t *testing.T) {
	t.Setenv("MX_CLAW_HOME", t.TempDir())
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"version":1}`, true},
		{`{"version":1,"server":{"resumeInterrupted":true}}`, true},
		{`{"version":1,"server":{"resumeInterrupted":false}}`, false},
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(home)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ResumeInterrupted(); got != tc.want {
			t.Errorf("%s: ResumeInterrupted = %v, want %v", tc.body, got, tc.want)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		if c, err = Load(home); err != nil || c.ResumeInterrupted() != tc.want {
			t.Errorf("%s: after Save, ResumeInterrupted = %v (%v), want %v", tc.body, c.ResumeInterrupted(), err, tc.want)
		}
	}
}
