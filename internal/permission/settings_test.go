package permission

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	t.Parallel()
	const path = "/home/u/.mx-claw/settings.json"
	s, err := ParseSettings(path, []byte(`{
		"permissions": {
			"allow": ["run_command(go test:*)", "edit_file(src/**)"],
			"ask": ["run_command(git push:*)"],
			"deny": ["read_file(~/.ssh/**)"],
			"defaultMode": "acceptEdits",
			"additionalDirectories": ["../shared"]
		},
		"hooks": {"PreToolUse": []},
		"env": {"A": "b"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Allow) != 2 || len(s.Ask) != 1 || len(s.Deny) != 1 || s.DefaultMode != ModeAcceptEdits ||
		!s.Exists || s.Path != path || len(s.AdditionalDirectories) != 1 {
		t.Errorf("unexpected settings: %+v", s)
	}
	if string(s.Other["hooks"]) != `{"PreToolUse": []}` || s.Other["env"] == nil || s.Other["permissions"] != nil {
		t.Errorf("other keys = %v", s.Other)
	}
}

func TestParseSettingsErrors(t *testing.T) {
	t.Parallel()
	const path = "/p/.mx-claw/settings.json"
	tests := []struct {
		text string
		want []string
	}{
		{`{"permissions":{"allow":["run_command(ls:*)","edit_file","run_command(go test"]}}`,
			[]string{path + `: permissions.allow[2]: "run_command(go test" is not a valid rule: missing ")"`}},
		{`{"permissions":{"deny":["x", 3]}}`, []string{path + ": permissions.deny[1]: must be a string, not 3"}},
		{`{"permissions":{"ask":"run_command"}}`, []string{path + ": permissions.ask: must be an array of rule strings"}},
		{`{"permissions":{"defaultMode":"yolo"}}`, []string{path + `: permissions.defaultMode: invalid permission mode "yolo" (valid: plan, default, acceptEdits, bypass)`}},
		{`{"permissions":{"defaultMode":1}}`, []string{path + ": permissions.defaultMode: must be a string"}},
		{`{"permissions":{"alow":[]}}`, []string{path + ": permissions.alow: unknown key"}},
		{`{"permissions":[]}`, []string{path + ": permissions: must be an object"}},
		{"{\n  \"permissions\": {,}\n}", []string{path + ": invalid JSON at line 2, column"}},
		{`[1]`, []string{path + ": must be a JSON object"}},
		{`{"permissions":{"allow":["run_command("],"deny":["read_file(~x)"]}}`,
			[]string{"permissions.allow[0]", "permissions.deny[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSettings(path, []byte(tt.text))
			if err == nil || !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("err = %v, want an ErrInvalidSettings", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := LoadSettings(filepath.Join(dir, "missing.json"))
	if err != nil || s.Exists || len(s.Allow) != 0 {
		t.Errorf("missing file: %+v, %v", s, err)
	}
	path := ProjectSettingsPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"allow":["run_command(go test"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSettings(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": permissions.allow[0]: ") {
		t.Errorf("err = %v, want one naming %s and the entry", err, path)
	}
	if got := UserSettingsPath("/h/.mx-claw"); got != filepath.Join("/h/.mx-claw", "settings.json") {
		t.Errorf("UserSettingsPath = %s", got)
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"default", "acceptEdits", "plan", "bypass", "bypassPermissions"} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q): %v", s, err)
		}
	}
	_, err := ParseMode("auto")
	if err == nil || !errors.Is(err, ErrInvalidMode) || !strings.Contains(err.Error(), "valid: plan, default, acceptEdits, bypass") {
		t.Errorf("ParseMode(auto) = %v", err)
	}
}

func settings(t *testing.T, path, text string) *Settings {
	t.Helper()
	s, err := ParseSettings(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUserAndProjectSettings(t *testing.T) {
	t.Parallel()
	user := settings(t, "/home/u/.mx-claw/settings.json", `{"permissions":{
		"allow":["run_command(make:*)","run_command(curl:*)"], "defaultMode":"acceptEdits"}}`)
	project := settings(t, "/w/proj/.mx-claw/settings.json", `{"permissions":{
		"allow":["run_command(npm run:*)"], "ask":["run_command(make deploy:*)"],
		"deny":["run_command(curl:*)"], "defaultMode":"bypass"}, "hooks":{}}`)

	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		p, err := NewPolicy(Options{User: user, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		if p.Mode() != ModeAcceptEdits || p.ModeOrigin() != user.Path {
			t.Errorf("mode = %s from %s, want the user's acceptEdits", p.Mode(), p.ModeOrigin())
		}
		ign := p.Ignored()
		if len(ign) != 2 || !strings.Contains(ign[0].Entry+ign[1].Entry, "defaultMode: bypass") ||
			!strings.Contains(ign[0].Entry+ign[1].Entry, "run_command(npm run:*)") || ign[0].Origin != project.Path {
			t.Errorf("ignored = %+v", ign)
		}
		for cmd, want := range map[string]Action{
			"make build":     Allow, // user allow
			"make deploy":    Ask,   // project ask tightens
			"curl x":         Deny,  // project deny tightens
			"npm run build":  Ask,   // project allow ignored
			"echo x > a.txt": Allow, // user's acceptEdits
		} {
			d := p.Decide(commandRequest(cmd))
			if d.Action != want {
				t.Errorf("%s: %s, want %s\n%s", cmd, d.Action, want, Explain(d))
			}
		}
		d := p.Decide(commandRequest("curl x"))
		if d.Source.Origin != project.Path || d.Source.List != Deny {
			t.Errorf("curl source = %+v, want the project deny rule", d.Source)
		}
	})
	t.Run("untrusted tighter mode applies", func(t *testing.T) {
		t.Parallel()
		pr := settings(t, project.Path, `{"permissions":{"defaultMode":"plan"}}`)
		p, _ := NewPolicy(Options{User: user, Project: pr})
		if p.Mode() != ModePlan || len(p.Ignored()) != 0 {
			t.Errorf("mode = %s, ignored %v; want plan", p.Mode(), p.Ignored())
		}
	})
	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		p, _ := NewPolicy(Options{User: user, Project: project, ProjectTrusted: true})
		if p.Mode() != ModeBypass || len(p.Ignored()) != 0 {
			t.Errorf("mode = %s, ignored %v; want bypass and nothing ignored", p.Mode(), p.Ignored())
		}
		if d := p.Decide(commandRequest("npm run build")); d.Action != Allow {
			t.Errorf("npm run build = %s", d.Action)
		}
		if d := p.Decide(commandRequest("curl x")); d.Action != Deny {
			t.Errorf("curl = %s; the deny rule must hold in bypass", d.Action)
		}
	})
	t.Run("explicit mode wins", func(t *testing.T) {
		t.Parallel()
		p, _ := NewPolicy(Options{Mode: ModeDefault, User: user, Project: project, ProjectTrusted: true})
		if p.Mode() != ModeDefault {
			t.Errorf("mode = %s, want default", p.Mode())
		}
		if _, err := NewPolicy(Options{Mode: "yolo"}); !errors.Is(err, ErrInvalidMode) {
			t.Errorf("invalid explicit mode: %v", err)
		}
	})
	t.Run("grants", func(t *testing.T) {
		t.Parallel()
		p, err := NewPolicy(Options{Grants: []Grant{{Rule: "run_command(go test:*)", Origin: "session grant"}}})
		if err != nil {
			t.Fatal(err)
		}
		d := p.Decide(commandRequest("go test ./..."))
		if d.Action != Allow || d.Source.Origin != "session grant" {
			t.Errorf("grant: %s from %+v", d.Action, d.Source)
		}
		if _, err := p.WithGrants(Grant{Rule: "run_command(", Origin: "project grant"}); err == nil || !strings.Contains(err.Error(), "project grant") {
			t.Errorf("bad grant: %v", err)
		}
		if q := p.WithMode(ModePlan); q.Mode() != ModePlan || p.Mode() != ModeDefault {
			t.Error("WithMode changed the original")
		}
	})
}

func TestLoadClaudeSettings(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if s, err := LoadClaudeSettings(ws, "settings.json"); err != nil || s.Exists {
		t.Fatalf("missing file: %+v, %v", s, err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte(`{"permissions":{"allow":["Bash(npm test:*)"],"defaultMode":"plan"},"hooks":{}}`), 0o644)
	s, err := LoadClaudeSettings(ws, "settings.json")
	if err != nil || len(s.Allow) != 1 || s.Allow[0].Tool != "run_command" || s.DefaultMode != ModePlan || s.Other["hooks"] == nil {
		t.Fatalf("LoadClaudeSettings = %+v, %v", s, err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(ws, ".claude", "settings.local.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadClaudeSettings(ws, "settings.local.json"); !errors.Is(err, ErrSymlinkedConfig) {
		t.Errorf("linked settings.local.json: %v", err)
	}
	if got := ClaudeProjectSettingsPaths(ws); got[0] != filepath.Join(ws, ".claude", "settings.local.json") || got[1] != filepath.Join(ws, ".claude", "settings.json") {
		t.Errorf("ClaudeProjectSettingsPaths = %v", got)
	}
}

func TestClaudeProjectSettingsInThePolicy(t *testing.T) {
	t.Parallel()
	local := settings(t, "/ws/.claude/settings.local.json", `{"permissions":{"defaultMode":"acceptEdits"}}`)
	shared := settings(t, "/ws/.claude/settings.json", `{"permissions":{"defaultMode":"plan","deny":["Bash(curl:*)"]}}`)
	p, err := NewPolicy(Options{ClaudeProject: []*Settings{local, shared}, ProjectTrusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeAcceptEdits || p.ModeOrigin() != local.Path {
		t.Errorf("mode %s from %s; want the local file's", p.Mode(), p.ModeOrigin())
	}
	if d := p.Decide(commandRequest("curl example.org")); d.Action != Deny || d.Source.Origin != shared.Path {
		t.Errorf("curl: %s from %s; want the shared file's deny", d.Action, d.Source.Origin)
	}
	own := settings(t, "/ws/.mx-claw/settings.json", `{"permissions":{"defaultMode":"default"}}`)
	p, _ = NewPolicy(Options{Project: own, ClaudeProject: []*Settings{local, shared}, ProjectTrusted: true})
	if p.Mode() != ModeDefault || p.ModeOrigin() != own.Path {
		t.Errorf("mode %s from %s; mx-claw's own file must win", p.Mode(), p.ModeOrigin())
	}
}
