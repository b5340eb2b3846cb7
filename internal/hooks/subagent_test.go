package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSubagentEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.json")
	c := mustParse(t, `{
	  "SubagentStart": [{"matcher": "explore", "hooks": [{"type": "command",
	    "command": "cat > `+seen+`.start; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\",\"additionalContext\":\"mind the tests\"}}'"}]}],
	  "SubagentStop": [{"matcher": "gen.*", "hooks": [{"type": "command",
	    "command": "cat > `+seen+`.stop; echo not yet >&2; exit 2"}]}]
	}`)
	r := &Runner{Config: c}
	ctx := context.Background()

	start := Event{Name: SubagentStart, SessionID: "parent", Cwd: dir, AgentID: "child", AgentType: "explore"}
	if !r.Wants(start) || r.Wants(Event{Name: SubagentStart, AgentType: "general"}) {
		t.Fatal("SubagentStart matchers must match the subagent type")
	}
	res := r.Run(ctx, start)
	if res.AdditionalContext != "mind the tests" || res.Blocked() {
		t.Errorf("SubagentStart result %+v", res)
	}
	var in map[string]any
	data, _ := os.ReadFile(seen + ".start")
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if in["hook_event_name"] != "SubagentStart" || in["agent_id"] != "child" || in["agent_type"] != "explore" || in["session_id"] != "parent" {
		t.Errorf("SubagentStart input %v", in)
	}

	stop := Event{Name: SubagentStop, SessionID: "parent", Cwd: dir, AgentID: "child", AgentType: "general",
		LastAssistantMessage: "done", AgentTranscriptPath: "/t/child.jsonl"}
	res = r.Run(ctx, stop)
	if !res.Blocked() || strings.TrimSpace(res.Reason) != "not yet" {
		t.Errorf("SubagentStop result %+v, want a block with the reason", res)
	}
	data, _ = os.ReadFile(seen + ".stop")
	in = nil
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if in["agent_transcript_path"] != "/t/child.jsonl" || in["last_assistant_message"] != "done" || in["stop_hook_active"] != false {
		t.Errorf("SubagentStop input %v", in)
	}
	if len(c.Notices()) != 0 {
		t.Errorf("notices %q: the subagent events run now", c.Notices())
	}
}
