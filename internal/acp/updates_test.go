package acp

import (
	"encoding/json"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMapper pins the mapping of events to session updates.
func TestMapper(t *testing.T) {
	t.Parallel()
	ok, bad := true, false
	tests := []struct {
		name   string
		replay bool
		events []protocol.Event
		want   []string // JSON of each update
	}{
		{"streamed text and reasoning", false, []protocol.Event{
			{Type: protocol.EventReasoningDelta, Text: "hmm"},
			{Type: protocol.EventMessageDelta, Text: "Hi"},
			{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "Hi"}},
			{Type: protocol.EventTurnCompleted},
		}, []string{
			`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}}`,
		}},
		{"replayed messages", true, []protocol.Event{
			{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleUser, Content: "do it"}},
			{Type: protocol.EventMessageDelta, Text: "ignored"},
			{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "done", Reasoning: "why"}},
		}, []string{
			`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"do it"}}`,
			`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"why"}}`,
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}`,
		}},
		{"edit asked, run, diff", false, []protocol.Event{
			{Type: protocol.EventPermissionRequested, ToolCallID: "c1", ToolName: "edit_file", Summary: "Edit a.go",
				Arguments: json.RawMessage(`{"path":"a.go","old_string":"x","new_string":"y"}`)},
			{Type: protocol.EventToolStarted, ToolCallID: "c1", ToolName: "edit_file", Summary: "Edit a.go"},
			{Type: protocol.EventToolCompleted, ToolCallID: "c1", ToolName: "edit_file", OK: &ok,
				Message: &protocol.Message{Role: protocol.RoleTool, Content: "Edited a.go"}},
		}, []string{
			`{"sessionUpdate":"tool_call","content":[{"type":"diff","path":"/ws/a.go","oldText":"x","newText":"y"}],"toolCallId":"c1","title":"Edit a.go","kind":"edit","status":"pending","locations":[{"path":"/ws/a.go"}],"rawInput":{"path":"a.go","old_string":"x","new_string":"y"}}`,
			`{"sessionUpdate":"tool_call_update","content":[{"type":"diff","path":"/ws/a.go","oldText":"x","newText":"y"}],"toolCallId":"c1","status":"in_progress"}`,
			`{"sessionUpdate":"tool_call_update","content":[{"type":"diff","path":"/ws/a.go","oldText":"x","newText":"y"}],"toolCallId":"c1","status":"completed"}`,
		}},
		{"new file diff has no old text", false, []protocol.Event{
			{Type: protocol.EventToolStarted, ToolCallID: "w", ToolName: "write_file", Summary: "Write n.go (2 bytes)",
				Arguments: json.RawMessage(`{"path":"/abs/n.go","content":"hi"}`)},
		}, []string{
			`{"sessionUpdate":"tool_call","content":[{"type":"diff","path":"/abs/n.go","newText":"hi"}],"toolCallId":"w","title":"Write n.go (2 bytes)","kind":"edit","status":"in_progress","locations":[{"path":"/abs/n.go"}],"rawInput":{"path":"/abs/n.go","content":"hi"}}`,
		}},
		{"command output streams", false, []protocol.Event{
			{Type: protocol.EventToolStarted, ToolCallID: "r", ToolName: "run_command", Summary: "Run ls", Arguments: json.RawMessage(`{"command":"ls"}`)},
			{Type: protocol.EventToolOutput, ToolCallID: "r", Text: "a\n"},
			{Type: protocol.EventToolOutput, ToolCallID: "r", Text: "b\n"},
			{Type: protocol.EventToolCompleted, ToolCallID: "r", ToolName: "run_command", OK: &bad, Preview: "exit 1"},
		}, []string{
			`{"sessionUpdate":"tool_call","content":[{"type":"content","content":{"type":"text","text":"` + "```sh\\nls\\n```" + `"}}],"toolCallId":"r","title":"Run ls","kind":"execute","status":"in_progress","rawInput":{"command":"ls"}}`,
			`{"sessionUpdate":"tool_call_update","content":[{"type":"content","content":{"type":"text","text":"` + "```sh\\nls\\n```" + `"}},{"type":"content","content":{"type":"text","text":"a\n"}}],"toolCallId":"r"}`,
			`{"sessionUpdate":"tool_call_update","content":[{"type":"content","content":{"type":"text","text":"` + "```sh\\nls\\n```" + `"}},{"type":"content","content":{"type":"text","text":"a\nb\n"}}],"toolCallId":"r"}`,
			`{"sessionUpdate":"tool_call_update","content":[{"type":"content","content":{"type":"text","text":"` + "```sh\\nls\\n```" + `"}},{"type":"content","content":{"type":"text","text":"exit 1"}}],"toolCallId":"r","status":"failed"}`,
		}},
		{"a call refused before it ran", false, []protocol.Event{
			{Type: protocol.EventToolCompleted, ToolCallID: "g", ToolName: "grep", Summary: "Search for x", OK: &bad, Preview: "Tool failed: permission denied"},
		}, []string{
			`{"sessionUpdate":"tool_call","content":[{"type":"content","content":{"type":"text","text":"Tool failed: permission denied"}}],"toolCallId":"g","title":"Search for x","kind":"search","status":"failed"}`,
		}},
		{"todo list as a plan", false, []protocol.Event{
			{Type: protocol.EventTodoUpdated, Todos: []protocol.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "weird"}}},
			{Type: protocol.EventTodoUpdated, Todos: []protocol.Todo{}},
		}, []string{
			`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"completed"},{"content":"b","priority":"medium","status":"pending"}]}`,
			`{"sessionUpdate":"plan","entries":[]}`,
		}},
		{"read with a line", false, []protocol.Event{
			{Type: protocol.EventToolStarted, ToolCallID: "rd", ToolName: "read_file", Summary: "Read a.go", Arguments: json.RawMessage(`{"path":"a.go","offset":10}`)},
		}, []string{
			`{"sessionUpdate":"tool_call","toolCallId":"rd","title":"Read a.go","kind":"read","status":"in_progress","locations":[{"path":"/ws/a.go","line":10}],"rawInput":{"path":"a.go","offset":10}}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMapper("/ws", tt.replay)
			var got []string
			for _, e := range tt.events {
				for _, u := range m.updates(e) {
					got = append(got, js(u))
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d updates, want %d:\n%s", len(got), len(tt.want), js(got))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("update %d:\n got %s\nwant %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestPromptText(t *testing.T) {
	t.Parallel()
	got, imgs, err := promptText([]contentBlock{
		textBlock("Look at "),
		{Type: "resource_link", Name: "a.go", URI: "file:///ws/a.go"},
		{Type: "resource", Resource: &embeddedResource{URI: "file:///ws/b.go", Text: "package b"}},
		{Type: "image", Data: "aGk=", MimeType: "image/png", URI: "file:///ws/shot.png"},
	})
	want := "Look at [a.go](file:///ws/a.go)\n<context ref=\"file:///ws/b.go\">\npackage b\n</context>\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v", got, err)
	}
	if len(imgs) != 1 || imgs[0].Data != "aGk=" || imgs[0].Name != "shot.png" {
		t.Errorf("images %+v", imgs)
	}
	for _, bad := range [][]contentBlock{
		{{Type: "image", Data: "xx", MimeType: "image/png"}},
		{{Type: "audio", Data: "xx", MimeType: "audio/wav"}, textBlock("hear this")},
		{textBlock("  ")},
		{{Type: "video"}},
	} {
		if _, _, err := promptText(bad); err == nil {
			t.Errorf("%s accepted", js(bad))
		}
	}
}
