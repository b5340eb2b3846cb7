package agent

import (
	"reflect"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestRepairView(t *testing.T) {
	t.Parallel()
	call := func(id string) protocol.ToolCall {
		return protocol.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"a"}`}
	}
	lcall := func(id string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"a"}`}
	}
	sys := protocol.Message{Role: protocol.RoleSystem, Content: "sys"}
	user := protocol.Message{Role: protocol.RoleUser, Content: "hi"}
	asst := func(ids ...string) protocol.Message {
		m := protocol.Message{Role: protocol.RoleAssistant, Reasoning: "thinking"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, call(id))
		}
		return m
	}
	lasst := func(ids ...string) llm.Message {
		m := llm.Message{Role: "assistant"}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, lcall(id))
		}
		return m
	}
	res := func(id, content string) protocol.Message {
		return protocol.Message{Role: protocol.RoleTool, ToolCallID: id, Content: content}
	}
	lres := func(id, content string) llm.Message {
		return llm.Message{Role: "tool", ToolCallID: id, Content: content}
	}
	lsys := llm.Message{Role: "system", Content: "sys"}
	luser := llm.Message{Role: "user", Content: "hi"}

	tests := []struct {
		name string
		in   []protocol.Message
		want []llm.Message
	}{
		{"clean", []protocol.Message{sys, user, asst("a"), res("a", "A"), {Role: protocol.RoleAssistant, Content: "done"}},
			[]llm.Message{lsys, luser, lasst("a"), lres("a", "A"), {Role: "assistant", Content: "done"}}},
		{"missing result filled", []protocol.Message{sys, user, asst("a", "b"), res("a", "A")},
			[]llm.Message{lsys, luser, lasst("a", "b"), lres("a", "A"), lres("b", InterruptedResult)}},
		{"missing before next user message", []protocol.Message{sys, user, asst("a"), user},
			[]llm.Message{lsys, luser, lasst("a"), lres("a", InterruptedResult), luser}},
		{"orphan dropped", []protocol.Message{sys, user, res("x", "X"), asst("a"), res("a", "A"), res("zz", "Z")},
			[]llm.Message{lsys, luser, lasst("a"), lres("a", "A")}},
		{"duplicate dropped", []protocol.Message{sys, user, asst("a"), res("a", "A1"), res("a", "A2")},
			[]llm.Message{lsys, luser, lasst("a"), lres("a", "A1")}},
		{"results reordered to call order", []protocol.Message{sys, user, asst("a", "b"), res("b", "B"), res("a", "A")},
			[]llm.Message{lsys, luser, lasst("a", "b"), lres("a", "A"), lres("b", "B")}},
		{"tool result after a user message is an orphan", []protocol.Message{sys, user, asst("a"), user, res("a", "late")},
			[]llm.Message{lsys, luser, lasst("a"), lres("a", InterruptedResult), luser}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := append([]protocol.Message(nil), tt.in...)
			got := repairView(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("repairView:\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Errorf("repairView changed its input")
			}
		})
	}
}
