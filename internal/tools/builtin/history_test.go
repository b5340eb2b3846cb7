package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

func TestHistoryTools(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("noise line\n", 600) + "the needle: ERR_42 in pkg/x.go\n" + strings.Repeat("tail\n", 10)
	msgs := []protocol.Message{
		{Seq: 1, Role: protocol.RoleSystem, Content: "system needle"},
		{Seq: 2, Role: protocol.RoleUser, Content: "find the needle please"},
		{Seq: 3, Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "c", Name: "run_command", Arguments: `{"command":"make"}`}}},
		{Seq: 4, Role: protocol.RoleTool, ToolName: "run_command", ToolCallID: "c", Content: long},
	}
	env := &tools.Env{History: func() ([]protocol.Message, error) { return msgs, nil }}
	ctx := context.Background()

	res, err := NewReadToolOutput().Run(ctx, env, json.RawMessage(`{"seq":4,"offset":598,"limit":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "   601\tthe needle: ERR_42") || !strings.Contains(res.Content, "offset 603 to continue") {
		t.Errorf("read_tool_output:\n%s", res.Content)
	}
	if _, err := NewReadToolOutput().Run(ctx, env, json.RawMessage(`{"seq":99}`)); err == nil {
		t.Error("a missing message was read")
	}
	if _, err := NewReadToolOutput().Run(ctx, &tools.Env{}, json.RawMessage(`{"seq":1}`)); err == nil {
		t.Error("read without history")
	}

	res, err = NewSearchHistory().Run(ctx, env, json.RawMessage(`{"query":"NEEDLE"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "seq 4 (tool)") || !strings.Contains(res.Content, "seq 2 (user)") || strings.Contains(res.Content, "seq 1") {
		t.Errorf("search_history:\n%s", res.Content)
	}
	if strings.Index(res.Content, "seq 4") > strings.Index(res.Content, "seq 2") {
		t.Error("results are not newest first")
	}
	res, _ = NewSearchHistory().Run(ctx, env, json.RawMessage(`{"query":"make"}`))
	if !strings.Contains(res.Content, "seq 3 (assistant)") {
		t.Errorf("tool call arguments not searched:\n%s", res.Content)
	}
	res, _ = NewSearchHistory().Run(ctx, env, json.RawMessage(`{"query":"absent text"}`))
	if !strings.Contains(res.Content, "No message") {
		t.Errorf("no-match answer %q", res.Content)
	}
}
