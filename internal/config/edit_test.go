package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpdateSavesThenSwapsSnapshot(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	c, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Update(func(n *Config) error {
		n.Providers["openai"].Models = append(n.Providers["openai"].Models, "gpt-x")
		n.ActiveProvider = "openai"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.ActiveProvider != "openai" || !c.Exists() || c.Providers["openai"].Models[len(c.Providers["openai"].Models)-1] != "gpt-x" {
		t.Errorf("snapshot not updated: %+v", c)
	}
	reloaded, err := Load(home)
	if err != nil || reloaded.ActiveProvider != "openai" {
		t.Fatalf("file not updated: %v %+v", err, reloaded)
	}
	before, _ := os.ReadFile(filepath.Join(home, FileName))

	// A failing change leaves both the snapshot and the file alone, even
	// if it already edited its copy.
	boom := errors.New("boom")
	err = c.Update(func(n *Config) error {
		n.ActiveProvider = "deepseek"
		n.Providers["openai"].Models = nil
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if c.ActiveProvider != "openai" || len(c.Providers["openai"].Models) == 0 {
		t.Errorf("snapshot changed by a failed update: %+v", c.Providers["openai"])
	}
	after, _ := os.ReadFile(filepath.Join(home, FileName))
	if string(before) != string(after) {
		t.Error("file changed by a failed update")
	}
}

func TestValidation(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"openai", "my-gw", "a.b_c", "X1"} {
		if err := ValidateProviderName(ok); err != nil {
			t.Errorf("ValidateProviderName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "a/b", "a b", "a:b", "é", strings.Repeat("a", 65)} {
		if err := ValidateProviderName(bad); err == nil {
			t.Errorf("ValidateProviderName(%q) accepted", bad)
		}
	}
	for _, ok := range []string{"gpt-4o", "meta-llama/Llama-3.1-8B", "qwen2.5:7b"} {
		if err := ValidateModelName(ok); err != nil {
			t.Errorf("ValidateModelName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a,b", "a\tb"} {
		if err := ValidateModelName(bad); err == nil {
			t.Errorf("ValidateModelName(%q) accepted", bad)
		}
	}
	if got := strings.Join(ParseModelList(" a, b,,a , c "), "|"); got != "a|b|c" {
		t.Errorf("ParseModelList = %s", got)
	}
	urls := map[string]string{
		"https://api.example.com/v1/": "https://api.example.com/v1",
		" http://127.0.0.1:8080 ":     "http://127.0.0.1:8080",
	}
	for in, want := range urls {
		if got, err := NormalizeBaseURL(in); err != nil || got != want {
			t.Errorf("NormalizeBaseURL(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "api.example.com", "ftp://x", "https://", "https://x/v1?key=1"} {
		if _, err := NormalizeBaseURL(bad); err == nil {
			t.Errorf("NormalizeBaseURL(%q) accepted", bad)
		}
	}
	_, err := NormalizeBaseURL("https://user:sk-in-url@x/v1")
	if err == nil || strings.Contains(err.Error(), "sk-in-url") {
		t.Errorf("URL with credentials: %v", err)
	}
}
