package agent

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// extraTool stands for a session's MCP tool.
type extraTool struct{ name string }

func (e extraTool) Info() tools.Info {
	return tools.Info{Name: e.name, Description: "An extra tool.",
		Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Risk: tools.RiskRead, ConcurrencySafe: true}
}
func (e extraTool) Summary(args json.RawMessage) string { return e.name }
func (e extraTool) Run(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: "extra ran"}, nil
}

// TestSessionToolsFrozen: a session's own tools are built at its first
// turn, offered and callable, and the same registry serves its later
// turns even when SessionTools would now answer differently.
func TestSessionToolsFrozen(t *testing.T) {
	t.Parallel()
	calls := 0
	var f *fixture
	f = newFixture(t, Options{SessionTools: func(ctx context.Context, sess *protocol.Session) (*tools.Registry, []string, error) {
		calls++
		name := "mcp__x__first"
		if calls > 1 {
			name = "mcp__x__later"
		}
		reg, err := f.core.opts.Tools.With(extraTool{name})
		return reg, []string{"a warning about " + name}, err
	}})
	s := f.session()
	f.srv.Enqueue(llmtest.Call("mcp__x__first", `{"q":"a"}`), llmtest.Text("one"), llmtest.Text("two"))
	var warnings []string
	sink := func(e protocol.Event) {
		if e.Type == protocol.EventWarning {
			warnings = append(warnings, e.Text)
		}
	}
	for _, input := range []string{"first", "second"} {
		if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: input}, sink); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Fatalf("SessionTools called %d times, want once", calls)
	}
	if !slices.Equal(warnings, []string{"a warning about mcp__x__first"}) {
		t.Fatalf("warnings %q", warnings)
	}
	reqs := f.srv.ChatRequests()
	for i, r := range reqs {
		if !slices.Contains(r.Chat.Tools, "mcp__x__first") || slices.Contains(r.Chat.Tools, "mcp__x__later") {
			t.Errorf("request %d offers %v", i, r.Chat.Tools)
		}
	}
	if got := toolResults(reqs[1]); len(got) != 1 || firstValue(got) != "extra ran" {
		t.Errorf("tool results %v", got)
	}
}

func toolResults(req llmtest.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Chat.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func firstValue(m map[string]string) string {
	for _, v := range m {
		return v
	}
	return ""
}
