package agent

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/permission"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenDate is the date the golden prompts are rendered on.
var goldenDate = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)

// gitWorkspace makes a repository on branch main with one commit, one
// modified file and one untracked file, and returns its root.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the git workspace cannot be made")
	}
	dir := realTempDir(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n")
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	writeFile(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {}\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "todo\n")
	return dir
}

func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenEnv returns the environment of a session in dir, with what
// differs between machines fixed: the system and the date.
func goldenEnv(dir string, mode permission.Mode) *Environment {
	return &Environment{Workspace: dir, System: "linux/amd64 (Debian GNU/Linux 13 (trixie))",
		Git: probeGit(context.Background(), dir), Date: goldenDate, Mode: mode, Approvals: AskWait,
		Sandbox: Sandbox{Mode: SandboxNone}, Model: "deepseek/deepseek-chat", ContextWindow: 128_000}
}

// checkGolden compares got with testdata/prompt/name, or rewrites it with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "prompt", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, got)
	}
}

// The system prompt of a git and of a non-git workspace in each mode,
// paths replaced by $WORKSPACE: every change to the instructions shows as
// a diff of these files.
func TestSystemPromptGolden(t *testing.T) {
	t.Parallel()
	workspaces := map[string]string{"git": gitWorkspace(t), "nogit": realTempDir(t)}
	for kind, dir := range workspaces {
		for _, mode := range permission.Modes() {
			t.Run(kind+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				p := BuildPrompt(goldenEnv(dir, mode))
				got := strings.ReplaceAll(p.Text(), dir, "$WORKSPACE")
				checkGolden(t, kind+"-"+string(mode)+".md", got)
				// The prompt without AGENTS.md, skills and memory stays
				// lean (issue 22: about 6 KB).
				if n := len(p.Text()); n > 6*1024 {
					t.Errorf("system prompt is %d bytes, want at most 6 KiB", n)
				}
			})
		}
	}
}

// A headless run under a sandbox, with extra roots, in a subdirectory of
// a repository, on a reasoning model the catalog does not know.
func TestSystemPromptGoldenHeadlessSandboxed(t *testing.T) {
	t.Parallel()
	root := gitWorkspace(t)
	sub := filepath.Join(root, "cmd", "tool")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	extra := realTempDir(t)
	e := goldenEnv(sub, permission.ModeAcceptEdits)
	e.Git = probeGit(context.Background(), sub)
	e.ExtraRoots = []string{extra}
	e.Approvals = AskDeny
	e.Sandbox = Sandbox{Mode: "workspace-write", WritableRoots: []string{"/opt/cache"}}
	e.Model, e.ContextWindow, e.WindowAssumed = "local/deepseek-r1:14b", 32_768, true
	got := BuildPrompt(e).Text()
	got = strings.ReplaceAll(got, extra, "$EXTRA")
	got = strings.ReplaceAll(got, root, "$REPO")
	checkGolden(t, "git-headless-sandboxed.md", got)
}

func TestModelFamilies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		model string
		want  []string
	}{
		{"deepseek/deepseek-chat", nil},
		{"openai/gpt-4.1", nil},
		{"deepseek/deepseek-reasoner", []string{"reasoning"}},
		{"openai/o3-mini", []string{"reasoning"}},
		{"openai/gpt-5", []string{"reasoning"}},
		{"openai/omni-moderation", nil},
		{"ollama/qwen2.5-coder:7b", []string{"open"}},
		{"ollama/deepseek-r1:14b", []string{"reasoning", "open"}},
		{"openrouter/meta-llama/llama-3.3-70b", []string{"open"}},
		{"groq/qwq-32b", []string{"reasoning", "open"}},
		{"custom/my-model", nil},
	} {
		if got := modelFamilies(c.model); !slices.Equal(got, c.want) {
			t.Errorf("modelFamilies(%q) = %v, want %v", c.model, got, c.want)
		}
	}
	if plain, r := Instructions("openai/gpt-4.1"), Instructions("openai/o3"); !strings.HasPrefix(r, plain) || !strings.Contains(r, "# Reasoning") {
		t.Error("a reasoning model's instructions are not the plain ones plus the reasoning paragraph")
	}
}

func TestGitStatusParsing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		out, want string
	}{
		{"## main\n", "a repository, on branch main."},
		{"## main...origin/main [ahead 2, behind 1]\n M a.go\n", "a repository, on branch main, tracking origin/main (2 ahead, 1 behind)."},
		{"## feature...origin/feature [gone]\n", "a repository, on branch feature, tracking origin/feature."},
		{"## No commits yet on trunk\n?? x\n", "a repository, on branch trunk (no commits yet)."},
		{"## HEAD (no branch)\n", "a repository, detached HEAD."},
	} {
		g := &GitState{Root: "/r"}
		g.parseStatus([]byte(c.out))
		if got := g.Describe("/r"); got != c.want {
			t.Errorf("%q: Describe = %q, want %q", c.out, got, c.want)
		}
	}
	var b strings.Builder
	b.WriteString("## main\n")
	for i := range 40 {
		b.WriteString("?? file" + strings.Repeat("é", 150) + string(rune('a'+i%26)) + "\n")
	}
	g := &GitState{}
	g.parseStatus([]byte(b.String()))
	if g.Count != 40 || len(g.Changes) != maxGitChanges || g.More() != 40-maxGitChanges {
		t.Errorf("count %d, shown %d, more %d; want 40, %d, %d", g.Count, len(g.Changes), g.More(), maxGitChanges, 40-maxGitChanges)
	}
	for _, l := range g.Changes {
		if len(l) > maxGitLine+len("…") || !strings.HasSuffix(l, "…") || !utf8Valid(l) {
			t.Fatalf("long status line not cut cleanly: %q", l)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// A repository whose config names an fsmonitor program does not get it
// run when a session starts.
func TestProbeGitRunsNoFSMonitor(t *testing.T) {
	t.Parallel()
	dir := gitWorkspace(t)
	marker := filepath.Join(t.TempDir(), "ran")
	hook := filepath.Join(t.TempDir(), "monitor.sh")
	writeFile(t, hook, "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "core.fsmonitor", hook)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	g := probeGit(context.Background(), dir)
	if g == nil || g.Branch != "main" || g.Count != 2 {
		t.Fatalf("probe = %+v, want branch main with 2 changes", g)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's fsmonitor program ran")
	}
}
