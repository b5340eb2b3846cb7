package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

func TestPlaceholderNote(t *testing.T) {
	t.Parallel()
	ph := []string{".mcp.json", ".gitmodules", ".claude"}
	for _, c := range []struct {
		output string
		want   string // "" for no note
	}{
		{".\n..\n.claude\n.mcp.json\nsrc\n", ".mcp.json, .claude"},
		{"-rw-r--r-- 1 u u 0 Jan 1 00:00 ./.gitmodules\n", ".gitmodules"},
		{"ok\n", ""},
		{"x.mcp.json .mcp.jsonl .claude-code\n", ""},
	} {
		got := placeholderNote(c.output, ph)
		switch {
		case c.want == "" && got != "":
			t.Errorf("%q: unexpected note %q", c.output, got)
		case c.want != "" && !strings.HasPrefix(got, "[sandbox: "+c.want+" are not real files"):
			t.Errorf("%q: note %q, want it to name %s", c.output, got, c.want)
		}
	}
}

// TestRunCommandPlaceholders: under bubblewrap, run_command's `ls -a`
// shows the placeholders with the one sentence that explains them, and
// `git status` in a fresh repository shows nothing and gets no note.
func TestRunCommandPlaceholders(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	m := sandbox.NewManager(sandbox.Options{Backend: sandbox.BackendBwrap})
	t.Cleanup(func() { m.Close() })
	if st := m.Status(); !st.Enforced {
		t.Skipf("bubblewrap cannot run here: %s (%s)", st.Reason, strings.Join(st.Details, "; "))
	}
	env, root := newEnv(t)
	cmd := exec.Command("git", "init", "-q", root)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	s, err := m.Session(sandbox.Policy{Config: sandbox.Resolve(nil, nil, "", ""), Workspace: root, TmpDir: filepath.Join(t.TempDir(), "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	env.Commands = &execx.Runner{Sandbox: s}
	out, err := run(t, NewRunCommand(), env, `{"command":"ls -a"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ".mcp.json\n") || !strings.Contains(out, "are not real files") {
		t.Errorf("ls -a without the note:\n%s", out)
	}
	out, err = run(t, NewRunCommand(), env, `{"command":"git status --porcelain -uall"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "[exit code 0") || strings.Contains(out, "[sandbox") {
		t.Errorf("git status in a fresh repository:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(root, ".mcp.json")); err == nil {
		t.Error(".mcp.json left in the workspace")
	}
}
