package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestInitWritesAgentsMD: `mx-claw init` has the model survey the
// workspace and write AGENTS.md; the write pauses for approval like any
// edit, and `mx-claw approve` writes it.
func TestInitWritesAgentsMD(t *testing.T) {
	t.Parallel()
	agents := "# AGENTS.md\\n\\n- Build: `make`\\n- Test: `make test`\\n"
	e := newEnv(t,
		llmtest.Call("list_dir", `{}`),
		llmtest.Call("read_file", `{"path":"Makefile"}`),
		llmtest.Call("write_file", `{"path":"AGENTS.md","content":"`+agents+`"}`),
		llmtest.Text("AGENTS.md is written."),
	)
	e.writeWS("Makefile", "build:\n\tgo build ./...\ntest:\n\tgo test ./...\n")
	e.writeWS("go.mod", "module example.test/demo\n")
	r := e.run("", "init", "mention the Makefile")
	if r.code != 4 {
		t.Fatalf("init: exit %d, want 4 (paused)\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "AGENTS.md")); err == nil {
		t.Fatal("AGENTS.md was written before it was approved")
	}
	first := e.srv.ChatRequests()[0].Chat.Messages
	prompt := first[len(first)-1].Content
	if !strings.Contains(prompt, "write AGENTS.md") || !strings.Contains(prompt, "The user adds: mention the Makefile") {
		t.Errorf("the init prompt: %q", prompt)
	}
	m := regexp.MustCompile(`mx-claw approve (\S+) (\S+)`).FindStringSubmatch(r.stderr)
	if m == nil || !strings.Contains(r.stderr, "AGENTS.md") {
		t.Fatalf("no approval offered for AGENTS.md:\n%s", r.stderr)
	}
	ok := e.run("", "approve", m[1], m[2])
	if ok.code != 0 {
		t.Fatalf("approve: exit %d\n%s", ok.code, ok.stderr)
	}
	data, err := os.ReadFile(filepath.Join(e.ws, "AGENTS.md"))
	if err != nil || string(data) != "# AGENTS.md\n\n- Build: `make`\n- Test: `make test`\n" {
		t.Errorf("AGENTS.md = %q, %v", data, err)
	}
	if !strings.Contains(ok.stdout, "AGENTS.md is written.") {
		t.Errorf("approve output: %s", ok.stdout)
	}
}
