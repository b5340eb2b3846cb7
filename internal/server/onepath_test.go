package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestServerTurnsKeepTheTerminalsRules checks that a turn started through
// the API goes through the same core as the terminal's: the user's hooks
// run, the permission mode of the settings applies, and the configured
// budget stops it.
func TestServerTurnsKeepTheTerminalsRules(t *testing.T) {
	t.Parallel()
	hookDir := t.TempDir()
	block := filepath.Join(hookDir, "block.sh")
	if err := os.WriteFile(block, []byte("#!/bin/bash\ncat >/dev/null; echo \"no shell commands here\" >&2; exit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := fmt.Sprintf(`{"permissions":{"defaultMode":"plan"},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":%q}]}]}}`, block)
	f := newFixture(t, func(o *testOptions) {
		o.settings = settings
		o.config = `"budget":{"maxTokens":5}`
	},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "cmd", Name: "run_command", Arguments: `{"command":"touch made-by-command"}`},
			{ID: "edit", Name: "write_file", Arguments: `{"path":"new.txt","content":"x"}`},
		}},
		llmtest.Text("never asked for"),
	)
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "go"}, nil, http.StatusAccepted)
	evs := c.until(protocol.EventTurnFailed)
	results := map[string]string{}
	for _, e := range evs {
		if e.Type == protocol.EventToolCompleted && e.Message != nil {
			results[e.ToolCallID] = e.Message.Content
		}
	}
	if !strings.Contains(results["cmd"], "blocked by a hook: no shell commands here") {
		t.Errorf("the hook did not block the command: %q", results["cmd"])
	}
	if !strings.Contains(results["edit"], "permission denied") {
		t.Errorf("plan mode did not deny the write: %q", results["edit"])
	}
	for _, name := range []string{"made-by-command", "new.txt"} {
		if _, err := os.Stat(filepath.Join(f.ws, name)); err == nil {
			t.Errorf("%s was made", name)
		}
	}
	if last := evs[len(evs)-1]; !strings.Contains(last.Error, "Budget spent: tokens") {
		t.Errorf("turn.failed %q, want the token budget", last.Error)
	}
	if n := len(f.llm.ChatRequests()); n != 1 {
		t.Errorf("%d model requests, want 1 (the budget stops the second)", n)
	}
}
