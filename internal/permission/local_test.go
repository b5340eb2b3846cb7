package permission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAddLocalAllow writes "always" rules to settings.local.json: other
// keys survive, a rule is not added twice, the file is kept out of git,
// and it reads back as settings.
func TestAddLocalAllow(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	path := LocalSettingsPath(ws)
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"permissions":{"deny":["read_file(secret/**)"]},"env":{"A":"1"}}`), 0o644)
	for _, r := range []string{"run_command(go test:*)", "edit_file(src/main.go)", "run_command(go test:*)"} {
		if err := AddLocalAllow(ws, r); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Allow) != 2 || s.Allow[0].Text != "run_command(go test:*)" || len(s.Deny) != 1 || s.Other["env"] == nil {
		t.Errorf("settings after two grants: allow %v, deny %v, other %v", s.Allow, s.Deny, s.Other)
	}
	ignore, err := os.ReadFile(filepath.Join(filepath.Dir(path), ".gitignore"))
	if err != nil || strings.Count(string(ignore), "settings.local.json") != 1 {
		t.Errorf(".gitignore = %q, %v", ignore, err)
	}
	if err := AddLocalAllow(ws, "not a rule("); err == nil {
		t.Error("a malformed rule was written")
	}
	os.WriteFile(path, []byte(`{"permissions": [`), 0o644)
	if err := AddLocalAllow(ws, "run_command(ls)"); err == nil {
		t.Error("a malformed file was overwritten")
	}
}

// TestLocalAllowNeedsTrustOrGrant: in an untrusted workspace an allow rule
// of settings.local.json applies only if the user granted it in mx-claw;
// deny rules always apply.
func TestLocalAllowNeedsTrustOrGrant(t *testing.T) {
	t.Parallel()
	local, err := ParseSettings("settings.local.json", []byte(`{"permissions":{"allow":["run_command(make:*)","run_command(curl:*)"],"deny":["run_command(rm:*)"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	granted := func(r string) bool { return r == "run_command(make:*)" }
	p, err := NewPolicy(Options{Local: local, LocalGranted: granted})
	if err != nil {
		t.Fatal(err)
	}
	var allows, denies int
	for _, r := range p.Rules() {
		switch r.List {
		case Allow:
			allows++
			if r.Rule.Text != "run_command(make:*)" {
				t.Errorf("ungranted rule applied: %s", r.Rule.Text)
			}
		case Deny:
			denies++
		}
	}
	if allows != 1 || denies != 1 || len(p.Ignored()) != 1 {
		t.Errorf("allows %d, denies %d, ignored %v", allows, denies, p.Ignored())
	}
	p, _ = NewPolicy(Options{Local: local, ProjectTrusted: true})
	if n := len(p.Rules()); n != 3 {
		t.Errorf("trusted: %d rules, want 3", n)
	}
}

// TestLoadLocalSettingsRefusesLinks: a settings.local.json that is a link
// is refused, and AddLocalAllow does not write through one.
func TestLoadLocalSettingsRefusesLinks(t *testing.T) {
	t.Parallel()
	ws, elsewhere := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".mx-claw"), 0o755)
	target := filepath.Join(elsewhere, "s.json")
	os.WriteFile(target, []byte(`{"permissions":{"allow":["run_command(curl:*)"]}}`), 0o644)
	if err := os.Symlink(target, LocalSettingsPath(ws)); err != nil {
		t.Skip(err)
	}
	if _, err := LoadLocalSettings(ws, true); err == nil {
		t.Error("a linked settings.local.json was read")
	}
	if err := AddLocalAllow(ws, "run_command(ls)"); err == nil {
		t.Error("AddLocalAllow wrote through a link")
	}
	if b, _ := os.ReadFile(target); strings.Contains(string(b), "run_command(ls)") {
		t.Error("the link's target was changed")
	}
	s, err := LoadLocalSettings(t.TempDir(), false)
	if err != nil || s.Exists {
		t.Errorf("missing file: %+v, %v", s, err)
	}
}
