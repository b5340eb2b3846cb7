package slashcmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(filepath.Join("testdata", p))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Command files in Claude Code's shapes: front matter with description,
// allowed-tools and model; argument-hint with $1 and $2; a bare prompt in
// a subfolder; a plugin's command using ${CLAUDE_PLUGIN_ROOT}.
func TestDiscoverAndExpand(t *testing.T) {
	t.Parallel()
	project := abs(t, "project")
	cmds, warnings := Discover([]Root{
		{Dir: abs(t, "home"), Source: "user"},
		{Dir: filepath.Join(project, ".mx-claw", "commands"), Source: "project", Base: project},
		{Dir: filepath.Join(project, ".claude", "commands"), Source: "project", Base: project},
		{Dir: abs(t, "plugin/commands"), Source: "plugin:rev", Base: abs(t, "plugin"), PluginRoot: abs(t, "plugin"), Namespace: "rev"},
	})
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if want := []string{"component", "fix-issue", "rev:review", "review"}; !slices.Equal(names, want) {
		t.Fatalf("commands %v, want %v", names, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "command /review in") {
		t.Errorf("warnings %q", warnings)
	}
	review, _ := Find(cmds, "/review")
	if review.Source != "user" || review.Model != "fake/other-model" || review.Description != "Review the staged changes" ||
		!slices.Equal(review.AllowedTools, []string{"Bash(git diff:*)", "Bash(git log:*)", "Read"}) {
		t.Errorf("review %+v", review)
	}
	if p, err := review.Expand("error handling"); err != nil || !strings.HasSuffix(p, "Focus on: error handling") || strings.Contains(p, "---") {
		t.Errorf("review expands to %q, %v", p, err)
	}
	fix, _ := Find(cmds, "fix-issue")
	if fix.ArgumentHint != "[issue-number] [priority]" {
		t.Errorf("argument hint %q", fix.ArgumentHint)
	}
	if p, _ := fix.Expand(`123 "very high"`); p != "Fix issue #123 with priority very high. Follow our coding standards." {
		t.Errorf("fix-issue expands to %q", p)
	}
	comp, _ := Find(cmds, "component")
	if comp.Description != "Create a React component named after the arguments, with a test. (project:frontend)" {
		t.Errorf("component description %q", comp.Description)
	}
	if p, _ := comp.Expand("Button"); !strings.HasSuffix(p, "\n\nARGUMENTS: Button") {
		t.Errorf("component expands to %q", p)
	}
	rev, _ := Find(cmds, "rev:review")
	if p, _ := rev.Expand(""); p != "Run "+abs(t, "plugin")+"/scripts/review.sh and summarise what it says." {
		t.Errorf("plugin command expands to %q", p)
	}
	if _, err := Find(cmds, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown command: %v", err)
	}
}

// A root may be one file, as a plugin's manifest can list command files.
func TestSingleFileRoot(t *testing.T) {
	t.Parallel()
	cmds, warnings := Discover([]Root{{Dir: abs(t, "project/.claude/commands/fix-issue.md"), Source: "plugin:x"}})
	if len(cmds) != 1 || cmds[0].Name != "fix-issue" || len(warnings) != 0 {
		t.Errorf("%+v %q", cmds, warnings)
	}
}

func TestProjectLinksRefused(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, ".claude", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(dir, "x.md")); err != nil {
		t.Fatal(err)
	}
	cmds, warnings := Discover([]Root{{Dir: dir, Source: "project", Base: ws}})
	if len(cmds) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "symbolic link") {
		t.Errorf("%+v %q", cmds, warnings)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, name, args string }{
		{"/review error handling", "review", "error handling"},
		{"  /fix-issue 12  ", "fix-issue", "12"},
		{"/rev:review", "rev:review", ""},
	} {
		name, args, ok := Split(c.in)
		if !ok || name != c.name || args != c.args {
			t.Errorf("Split(%q) = %q %q %v", c.in, name, args, ok)
		}
	}
	for _, bad := range []string{"review", "/", "/a/b", "/ x"} {
		if _, _, ok := Split(bad); ok {
			t.Errorf("Split(%q) accepted", bad)
		}
	}
}
