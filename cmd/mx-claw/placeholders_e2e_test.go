package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestSandboxPlaceholdersOutOfGitsView: in a fresh repository under
// bubblewrap, `git status` run by the model lists nothing though the
// absent protected paths are masked, `ls -a` comes with the sentence that
// explains the placeholders, .mcp.json still cannot be created, and no
// placeholder is left afterwards.
func TestSandboxPlaceholdersOutOfGitsView(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "status", Name: "run_command", Arguments: `{"command":"git status --porcelain -uall; echo status-done"}`},
			{ID: "ls", Name: "run_command", Arguments: `{"command":"ls -a"}`},
			{ID: "create", Name: "run_command", Arguments: `{"command":"echo '{}' > .mcp.json"}`},
		}},
		llmtest.Text("done"),
	)
	needSandbox(t, e)
	if !strings.Contains(e.run("", "sandbox", "status", "--json").stdout, `"backend": "bwrap"`) {
		t.Skip("the sandbox here is not bubblewrap, which alone shows placeholders")
	}
	cmd := exec.Command("git", "init", "-q", e.ws)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	r := e.run("", "run", "--yolo", "look around")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.HasPrefix(res["status"], "status-done\n") {
		t.Errorf("git status lists something in a fresh repository: %q", res["status"])
	}
	if !strings.Contains(res["ls"], ".mcp.json") || !strings.Contains(res["ls"], "not real files") {
		t.Errorf("ls -a without the placeholders' note: %q", res["ls"])
	}
	if strings.Contains(res["create"], "exit code 0") {
		t.Errorf("creating .mcp.json succeeded: %q", res["create"])
	}
	for _, p := range []string{".mcp.json", ".gitmodules", ".mx-claw", ".claude"} {
		if _, err := os.Lstat(filepath.Join(e.ws, p)); err == nil {
			t.Errorf("%s left in the workspace", p)
		}
	}
}
