package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEscapeExcludePattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{".mcp.json", ".mcp.json"},
		{"sub dir/.gitmodules", "sub dir/.gitmodules"},
		{"a*b?/[x]/.claude", `a\*b\?/\[x]/.claude`},
		{"#x/.mcp.json", `\#x/.mcp.json`},
		{"!x/.mcp.json", `\!x/.mcp.json`},
		{`back\slash/.mcp.json`, `back\\slash/.mcp.json`},
		{"trailing  ", `trailing\ \ `},
	} {
		if got := escapeExcludePattern(c.in); got != c.want {
			t.Errorf("escapeExcludePattern(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPlaceholderRepos: placeholders are anchored to the nearest
// repository holding them (a .git file followed to its git directory);
// those inside a git directory, named .git, outside any repository, or
// behind another placeholder .git are left out.
func TestPlaceholderRepos(t *testing.T) {
	t.Parallel()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("outer/.git")
	mk("outer/ws/sub")
	gd := mk("outer/.git/worktrees/wt")
	mk("wt")
	if err := os.WriteFile(filepath.Join(root, "wt/.git"), []byte("gitdir: "+gd+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk("plain")
	placeholder := mk("outer/ws/sub/.git") // another run's mask
	isMask := func(p string) bool { return p == placeholder }
	masks := []string{
		filepath.Join(root, "outer/ws/.mcp.json"),
		filepath.Join(root, "outer/ws/sub/.gitmodules"),
		filepath.Join(root, "outer/.git/hooks"),
		filepath.Join(root, "outer/ws/.git"),
		filepath.Join(root, "wt/.claude"),
		filepath.Join(root, "plain/.mcp.json"),
	}
	got := map[string]string{}
	for _, r := range placeholderRepos(masks, isMask) {
		got[r.gitDir] = r.workTree + ": " + strings.Join(r.patterns, " ")
	}
	want := map[string]string{
		filepath.Join(root, "outer/.git"): filepath.Join(root, "outer") + ": /ws/.mcp.json /ws/sub/.gitmodules",
		gd:                                filepath.Join(root, "wt") + ": /.claude",
	}
	if len(got) != len(want) {
		t.Errorf("repos = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("repo %s: %q, want %q", k, got[k], v)
		}
	}
}

// TestUserExcludesFile: core.excludesFile as the user configured it, else
// git's default under XDG_CONFIG_HOME or HOME.
func TestUserExcludesFile(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	home := t.TempDir()
	ws := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	if got, want := userExcludesFile(ws, env), filepath.Join(home, ".config/git/ignore"); got != want {
		t.Errorf("default = %q, want %q", got, want)
	}
	if got, want := userExcludesFile(ws, append(env, "XDG_CONFIG_HOME=/x")), "/x/git/ignore"; got != want {
		t.Errorf("with XDG_CONFIG_HOME = %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\texcludesFile = ~/my-ignore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := userExcludesFile(ws, env), filepath.Join(home, "my-ignore"); got != want {
		t.Errorf("configured = %q, want %q", got, want)
	}
}

// BenchmarkHidePlaceholders measures what hiding a repository's
// placeholders from git adds to each bwrap command: one `git config`
// and two small files.
func BenchmarkHidePlaceholders(b *testing.B) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	if err := os.MkdirAll(filepath.Join(root, "ws", ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	masks := []string{filepath.Join(root, "ws", ".mcp.json"), filepath.Join(root, "ws", ".gitmodules")}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root}
	for b.Loop() {
		_, dir, err := hidePlaceholders(root, masks, func(string) bool { return false }, env)
		if err != nil || dir == "" {
			b.Fatal(err, dir)
		}
		os.RemoveAll(dir)
	}
}
