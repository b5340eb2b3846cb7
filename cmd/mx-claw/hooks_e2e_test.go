// End-to-end tests of hooks from the user's and a project's settings.

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

func TestHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "blocked", Name: "run_command", Arguments: `{"command":"touch blocked-file"}`},
			{ID: "rewritten", Name: "write_file", Arguments: `{"path":"original.txt","content":"x"}`},
			{ID: "slow", Name: "list_dir", Arguments: `{}`},
		}},
		llmtest.Text("done"),
	)
	hookDir := filepath.Join(e.home, "hooks")
	os.MkdirAll(hookDir, 0o755)
	write := func(name, body string) string {
		p := filepath.Join(hookDir, name)
		if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	block := write("block.sh", `cat >/dev/null; echo "no shell commands in this repo" >&2; exit 2`+"\n")
	rewrite := write("rewrite.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"path":"rewritten.txt","content":"from hook"}}}'`+"\n")
	slow := write("slow.sh", "sleep 5\n")
	e.writeHome("settings.json", fmt.Sprintf(`{"hooks":{"PreToolUse":[
		{"matcher":"Bash","hooks":[{"type":"command","command":%q}]},
		{"matcher":"write_file","hooks":[{"type":"command","command":%q}]},
		{"matcher":"list_dir","hooks":[{"type":"command","command":%q,"timeout":1}]}]}}`, block, rewrite, slow))
	r := e.run("", "run", "--permission-mode", "acceptEdits", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if res["blocked"] != "Tool failed: blocked by a hook: no shell commands in this repo" {
		t.Errorf("blocked call result %q", res["blocked"])
	}
	if _, err := os.Stat(filepath.Join(e.ws, "blocked-file")); err == nil {
		t.Error("the blocked command ran")
	}
	if got, err := os.ReadFile(filepath.Join(e.ws, "rewritten.txt")); err != nil || string(got) != "from hook" {
		t.Errorf("rewritten input: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "original.txt")); err == nil {
		t.Error("the original input ran too")
	}
	if !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("no timeout warning on stderr: %q", r.stderr)
	}
	if !strings.Contains(res["slow"], "./") {
		t.Errorf("the call after a slow hook did not run: %q", res["slow"])
	}
}

func TestUntrustedProjectHooksDoNotRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("list_dir", `{}`), llmtest.Text("a"), llmtest.Call("list_dir", `{"depth":1}`), llmtest.Text("b"))
	marker := filepath.Join(e.home, "hook-ran")
	e.writeWS(".mx-claw/settings.json", fmt.Sprintf(`{"permissions":{"defaultMode":"bypass"},
		"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker))
	if r := e.run("", "run", "untrusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook of an untrusted project ran")
	}
	if r := e.run("", "run", "--trust", "trusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the trusted project's hook did not run")
	}
}
