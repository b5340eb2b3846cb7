package plugins

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyHome copies testdata/home to a temporary home, so enabling writes
// there.
func copyHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	err := filepath.Walk(filepath.Join("testdata", "home"), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join("testdata", "home"), p)
		dst := filepath.Join(home, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home
}

// Claude Code's plugin layout loads: .claude-plugin/plugin.json, commands/,
// skills/, hooks/hooks.json with ${CLAUDE_PLUGIN_ROOT}, .mcp.json; and the
// same with hooks and servers inline in the manifest; and mx-claw's own
// plugin.json naming its folders. A path out of the plugin is refused.
func TestListClaudeCodeLayout(t *testing.T) {
	t.Parallel()
	home := copyHome(t)
	list, warnings := List(home)
	var folders []string
	for _, p := range list {
		folders = append(folders, p.Folder)
		if p.Enabled {
			t.Errorf("%s is enabled before anyone enabled it", p.Folder)
		}
	}
	if !slices.Equal(folders, []string{"audit-trail", "inline", "own"}) {
		t.Fatalf("plugins %v", folders)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "notaplugin: no manifest") || !strings.Contains(joined, "escape: manifest \"skills\": path \"../audit-trail/skills\" is not inside") {
		t.Errorf("warnings:\n%s", joined)
	}
	at := list[0]
	root := filepath.Join(home, "plugins", "audit-trail")
	if at.Name != "audit-trail" || at.Version != "1.0.0" || !slices.Equal(at.SkillDirs, []string{filepath.Join(root, "skills")}) ||
		!slices.Equal(at.CommandDirs, []string{filepath.Join(root, "commands")}) {
		t.Errorf("audit-trail %+v", at)
	}
	var hooks map[string][]struct {
		Hooks []struct{ Command string }
	}
	if err := json.Unmarshal(at.Hooks, &hooks); err != nil || hooks["PostToolUse"][0].Hooks[0].Command != "python3 "+root+"/hooks/log.py" {
		t.Errorf("hooks %s (%v)", at.Hooks, err)
	}
	var srv struct {
		Command string
		Args    []string
	}
	if err := json.Unmarshal(at.MCPServers["audit-db"], &srv); err != nil || srv.Command != root+"/bin/server" || srv.Args[1] != root+"/audit.db" {
		t.Errorf("servers %s", at.MCPServers["audit-db"])
	}
	in := list[1]
	if in.Name != "inline-hooks" || !strings.Contains(string(in.Hooks), filepath.Join(home, "plugins", "inline")+"/hooks/pre.py") ||
		in.MCPServers["docs"] == nil || len(in.Notices) != 1 || !strings.Contains(in.Notices[0], "agents are not used") {
		t.Errorf("inline %+v", in)
	}
	own := list[2]
	if !slices.Equal(own.SkillDirs, []string{filepath.Join(home, "plugins", "own", "my-skills")}) ||
		!slices.Equal(own.CommandFiles, []string{filepath.Join(home, "plugins", "own", "cmds", "one.md")}) {
		t.Errorf("own %+v", own)
	}
}

func TestEnableDisable(t *testing.T) {
	t.Parallel()
	home := copyHome(t)
	if on, _ := Enabled(home); len(on) != 0 {
		t.Fatalf("enabled at install: %+v", on)
	}
	if _, err := Enable(home, "inline-hooks"); err != nil { // by manifest name
		t.Fatal(err)
	}
	if _, err := Enable(home, "audit-trail"); err != nil {
		t.Fatal(err)
	}
	on, _ := Enabled(home)
	if len(on) != 2 || on[0].Folder != "audit-trail" || on[1].Folder != "inline" {
		t.Fatalf("enabled %+v", on)
	}
	if _, err := Disable(home, "audit-trail"); err != nil {
		t.Fatal(err)
	}
	if on, _ := Enabled(home); len(on) != 1 || on[0].Folder != "inline" {
		t.Fatalf("after disable %+v", on)
	}
	if _, err := Enable(home, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("enable unknown: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(home, StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v %v", fi, err)
	}
	// A damaged state file enables nothing and says so.
	if err := os.WriteFile(filepath.Join(home, StateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	on, warnings := Enabled(home)
	if len(on) != 0 || len(warnings) == 0 || !strings.Contains(warnings[0], "not valid JSON") {
		t.Errorf("damaged state: %+v %q", on, warnings)
	}
}
