package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// TestGitDoesNotListPlaceholders: under bwrap, the empty read-only
// placeholders masking absent protected paths are not untracked files to
// git inside the sandbox — for a workspace that is a repository and for
// one that is a subdirectory of a repository — while real untracked files
// still show, the user's own global excludes and git configuration from
// the environment still apply, a nested repository's real .mcp.json is not
// hidden, the placeholders still cannot be written, and nothing is left on
// the host afterwards.
func TestGitDoesNotListPlaceholders(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	m := sandbox.NewManager(sandbox.Options{Backend: sandbox.BackendBwrap, StateDir: state})
	t.Cleanup(func() { m.Close() })
	if st := m.Status(); !st.Enforced {
		t.Skipf("bubblewrap cannot run here: %s (%s)", st.Reason, strings.Join(st.Details, "; "))
	}
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(filepath.Join(home, ".config", "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "git", "ignore"), []byte("*.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid",
		// The user's own git configuration from the environment stays.
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=alias.hello", "GIT_CONFIG_VALUE_0=!echo hello from the alias"}
	gitInit := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(git, "init", "-q", dir)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
	}
	for _, c := range []struct{ name, repo, ws string }{
		{"workspace is the repository", "repo", "repo"},
		{"workspace below the repository", "outer", "outer/ws"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo, ws := filepath.Join(root, c.repo), filepath.Join(root, c.ws)
			gitInit(t, repo)
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := m.Session(sandbox.Policy{Config: sandbox.Resolve(nil, nil, "", ""), Workspace: ws,
				TmpDir: filepath.Join(root, "tmp-"+c.repo)})
			if err != nil {
				t.Fatal(err)
			}
			r := &execx.Runner{Sandbox: s}
			run := func(script string) execx.Result {
				t.Helper()
				res, err := r.Run(context.Background(), execx.Command{Script: script, Dir: ws, Env: env, Timeout: 30 * time.Second})
				if err != nil {
					t.Fatalf("%s: %v", script, err)
				}
				return res
			}
			res := run("ls -a; echo ---; git status --porcelain -uall")
			_, status, _ := strings.Cut(res.Output, "---\n")
			if !strings.Contains(res.Output, ".mcp.json") {
				t.Fatalf("no placeholder to hide (ls -a shows none): %s", res.Output)
			}
			if res.ExitCode != 0 || strings.TrimSpace(status) != "" {
				t.Errorf("git status lists the placeholders (exit %d): %q", res.ExitCode, status)
			}
			res = run("echo x > real.txt && echo x > debug.log && git status --porcelain -uall && git hello")
			if !strings.Contains(res.Output, "real.txt") || res.ExitCode != 0 {
				t.Errorf("a real untracked file is not listed: %s", res.Output)
			}
			for _, hidden := range []string{"debug.log", ".mcp.json", ".gitmodules"} {
				if strings.Contains(res.Output, hidden) {
					t.Errorf("%s listed: %s", hidden, res.Output)
				}
			}
			if !strings.Contains(res.Output, "hello from the alias") {
				t.Errorf("the environment's git configuration was lost: %s", res.Output)
			}
			// A nested repository's real .mcp.json is its own, not hidden.
			res = run("git init -q nested && echo '{}' > nested/.mcp.json && git -C nested status --porcelain")
			if !strings.Contains(res.Output, "?? .mcp.json") {
				t.Errorf("a nested repository's real .mcp.json is hidden: %s", res.Output)
			}
			if res := run("echo x > .mcp.json"); res.ExitCode == 0 {
				t.Errorf("writing .mcp.json succeeded: %s", res.Output)
			}
			if res := run("rm -f .mcp.json .gitmodules"); res.ExitCode == 0 {
				t.Errorf("removing the placeholders succeeded: %s", res.Output)
			}
			for _, p := range []string{".mcp.json", ".gitmodules", ".mx-claw", ".claude"} {
				if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
					t.Errorf("placeholder %s left on the host", p)
				}
			}
			left, _ := filepath.Glob(filepath.Join(state, "git-*"))
			if len(left) != 0 {
				t.Errorf("per-run git files left: %v", left)
			}
		})
	}
}

// TestPlaceholderHeldByConcurrentRun: a command that starts while another
// one's placeholders are in place keeps them protected (and hidden from
// git) after the first command has ended and cleaned up.
func TestPlaceholderHeldByConcurrentRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	m := sandbox.NewManager(sandbox.Options{Backend: sandbox.BackendBwrap})
	t.Cleanup(func() { m.Close() })
	if st := m.Status(); !st.Enforced {
		t.Skipf("bubblewrap cannot run here: %s (%s)", st.Reason, strings.Join(st.Details, "; "))
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1"}
	cmd := exec.Command("git", "init", "-q", ws)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	s, err := m.Session(sandbox.Policy{Config: sandbox.Resolve(nil, nil, "", ""), Workspace: ws, TmpDir: filepath.Join(root, "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	r := &execx.Runner{Sandbox: s}
	run := func(script string) execx.Result {
		res, err := r.Run(context.Background(), execx.Command{Script: script, Dir: ws, Env: env, Timeout: 30 * time.Second})
		if err != nil {
			t.Error(err)
		}
		return res
	}
	wait := func(name string) string {
		return "for i in $(seq 600); do [ -e " + name + " ] && break; sleep 0.05; done; "
	}
	first := make(chan execx.Result)
	go func() { first <- run(wait("second-started")) }()
	second := make(chan execx.Result)
	go func() {
		// Starts once the first has its placeholders in place.
		for i := 0; i < 600; i++ {
			if _, err := os.Lstat(filepath.Join(ws, ".mcp.json")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		second <- run("touch second-started; " + wait("first-done") +
			"echo x > .mcp.json; echo write=$?; git status --porcelain -uall")
	}()
	<-first
	if err := os.WriteFile(filepath.Join(ws, "first-done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-second
	if !strings.Contains(res.Output, "write=1") {
		t.Errorf("writing .mcp.json after the first command ended was not refused: %s", res.Output)
	}
	if strings.Contains(res.Output, ".mcp.json\n") || strings.Contains(res.Output, ".gitmodules") {
		t.Errorf("git lists a placeholder: %s", res.Output)
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".mcp.json")); err == nil {
		t.Errorf(".mcp.json left on the host: %q", b)
	}
}
