package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func formats(t *testing.T, sub string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "formats", sub))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Skills in the shapes public repositories use load unchanged: Anthropic's
// (license, scripts beside SKILL.md), the Agent Skills format's (block
// description, space-separated allowed-tools, metadata, compatibility),
// Claude Code's project skills (comma-separated allowed-tools), a front
// matter YAML refuses (read leniently) and one without a name (the
// folder's). A file without front matter is skipped with a warning.
func TestDiscoverRealShapes(t *testing.T) {
	t.Parallel()
	roots := []Root{
		{Dir: formats(t, "anthropic"), Source: "user"},
		{Dir: formats(t, "agentskills"), Source: "user"},
		{Dir: filepath.Join(formats(t, "claude-project"), ".claude", "skills"), Source: "project", Base: formats(t, "claude-project")},
		{Dir: formats(t, "lenient"), Source: "user"},
		{Dir: formats(t, "broken"), Source: "user"},
		{Dir: formats(t, "noname"), Source: "plugin:db", Prefix: "db:"},
		{Dir: formats(t, "missing"), Source: "user"},
	}
	got, warnings := Discover(roots)
	want := map[string]struct {
		desc  string
		tools []string
	}{
		"changelog-writer": {"Writes the CHANGELOG entry for a release from the commits since the last tag. Use when preparing a release.",
			[]string{"Bash(git log:*)", "Bash(git describe:*)", "Read"}},
		"commit-helper": {"Generates clear commit messages from git diffs. Use when writing commit messages or reviewing staged changes.",
			[]string{"Read", "Grep", "Bash(git diff:*)", "Bash(git log:*)"}},
		"db:db-migrate": {"Write a new migration file for every schema change; never edit an applied one.", []string{"Bash(go run ./cmd/migrate:*)"}},
		"pdf-forms":     {"Fill in PDF forms and pull the values out of filled ones. Use when the user gives a PDF with form fields, asks to complete a form, or wants the answers of a filled form as data.", nil},
		"release-notes": {"Drafts release notes. Use when: a release is tagged", []string{"Read", "Grep"}},
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
		w, ok := want[s.Name]
		if !ok {
			t.Errorf("unexpected skill %s", s.Name)
			continue
		}
		if s.Description != w.desc || !slices.Equal(s.AllowedTools, w.tools) {
			t.Errorf("%s: %q %q, want %q %q", s.Name, s.Description, s.AllowedTools, w.desc, w.tools)
		}
	}
	if !slices.IsSorted(names) || len(names) != len(want) {
		t.Errorf("skills %v, want the %d of the fixtures, sorted", names, len(want))
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"no-front-matter is not loaded", "release-notes: its front matter is not valid YAML", "db-migrate: no description"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestDiscoverShadowAndLinks(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nBody of " + name + "\n"
	}
	write(filepath.Join(home, "a", "SKILL.md"), skill("a", "home a"))
	write(filepath.Join(ws, ".claude", "skills", "a", "SKILL.md"), skill("a", "project a"))
	write(filepath.Join(ws, ".claude", "skills", "b", "SKILL.md"), skill("b", "project b"))
	// A project's skill folder that is a link out of the project, and a
	// SKILL.md that is one, are refused.
	outside := t.TempDir()
	write(filepath.Join(outside, "evil", "SKILL.md"), skill("evil", "outside"))
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(ws, ".claude", "skills", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".claude", "skills", "sneaky"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil", "SKILL.md"), filepath.Join(ws, ".claude", "skills", "sneaky", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	// A whole skills folder that is a link is refused too.
	if err := os.MkdirAll(filepath.Join(ws, ".agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".agents", "skills")); err != nil {
		t.Fatal(err)
	}
	got, warnings := Discover([]Root{
		{Dir: home, Source: "user"},
		{Dir: filepath.Join(ws, ".claude", "skills"), Source: "project", Base: ws},
		{Dir: filepath.Join(ws, ".agents", "skills"), Source: "project", Base: ws},
	})
	if len(got) != 2 || got[0].Name != "a" || got[0].Description != "home a" || got[1].Name != "b" {
		t.Fatalf("got %+v", got)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"left out", "evil is a symbolic link", "sneaky", "skills is a symbolic link"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
}

func TestToolLoadsBodyAndFiles(t *testing.T) {
	t.Parallel()
	found, _ := Discover([]Root{{Dir: formats(t, "anthropic"), Source: "user"}, {Dir: formats(t, "agentskills"), Source: "user"}})
	cat := NewCatalog(found)
	tool := NewTool(func(ctx context.Context, sessionID string) (*Catalog, error) {
		if sessionID != "s1" {
			return nil, errors.New("wrong session")
		}
		return cat, nil
	})
	if _, err := tools.NewRegistry(tool); err != nil {
		t.Fatalf("the tool does not register: %v", err)
	}
	ws, err := tools.NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{SessionID: "s1", Workspace: ws}
	run := func(args string) tools.Result {
		t.Helper()
		r, err := tool.Run(context.Background(), env, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return r
	}
	r := run(`{"name":"pdf-forms"}`)
	for _, want := range []string{"<skill-instructions>\n# PDF forms", "python scripts/check_fields.py", "- LICENSE.txt (7 B)",
		"- reference/annotations.md", "- scripts/check_fields.py", "- scripts/fill_fields.py", `"file": PATH`} {
		if !strings.Contains(r.Content, want) || r.IsError {
			t.Errorf("load lacks %q:\n%s", want, r.Content)
		}
	}
	if strings.Contains(r.Content, "- SKILL.md") {
		t.Error("SKILL.md is listed among the other files")
	}
	if r := run(`{"name":"pdf-forms","file":"reference/annotations.md"}`); r.Content != "# Annotations\n\nPlace text at coordinates.\n" {
		t.Errorf("file read: %q", r.Content)
	}
	for _, bad := range []string{`{"name":"pdf-forms","file":"../changelog-writer/SKILL.md"}`, `{"name":"pdf-forms","file":"/etc/passwd"}`} {
		if _, err := tool.Run(context.Background(), env, json.RawMessage(bad)); err == nil {
			t.Errorf("%s: read a file outside the skill", bad)
		}
	}
	if r := run(`{"name":"nope"}`); !r.IsError {
		t.Error("an unknown skill is not an error result")
	}
	if r := run(`{"query":"release changelog"}`); !strings.Contains(r.Content, "- changelog-writer:") {
		t.Errorf("search: %s", r.Content)
	}
	if r := run(`{"name":"changelog-writer"}`); !strings.Contains(r.Content, "Bash(git log:*), Bash(git describe:*), Read") {
		t.Errorf("allowed tools not shown: %s", r.Content)
	}
}

// A cached SKILL.md is read again once it changes.
func TestCacheSeesEdits(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	p := filepath.Join(home, "a", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(desc string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte("---\nname: a\ndescription: "+desc+"\n---\nx\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	var c Cache
	now := time.Now()
	write("first", now)
	if got, _ := Discover([]Root{{Dir: home, Source: "user"}}, &c); got[0].Description != "first" {
		t.Fatal(got)
	}
	write("second, longer", now.Add(time.Second))
	if got, _ := Discover([]Root{{Dir: home, Source: "user"}}, &c); got[0].Description != "second, longer" {
		t.Errorf("a changed skill was served from the cache: %+v", got)
	}
}

func TestExpandDirs(t *testing.T) {
	t.Parallel()
	s := Skill{Dir: "/p/skills/x", Base: "/p", Source: "plugin:p"}
	if got := expandDirs("run ${CLAUDE_SKILL_DIR}/a.sh or ${CLAUDE_PLUGIN_ROOT}/bin/b", s); got != "run /p/skills/x/a.sh or /p/bin/b" {
		t.Errorf("got %q", got)
	}
	s.Source = "project"
	if got := expandDirs("${CLAUDE_PLUGIN_ROOT}", s); got != "${CLAUDE_PLUGIN_ROOT}" {
		t.Errorf("a project's skill got a plugin root: %q", got)
	}
}
