package sessionio

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// codex keeps each session as a "rollout" JSONL file under
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl. Each line is
// {"timestamp", "type", "payload"}: session_meta (id, cwd, ...),
// turn_context (the model, ...), response_item (a Responses API item:
// message, reasoning, function_call, function_call_output,
// custom_tool_call(_output), local_shell_call, web_search_call, ...),
// compacted (a summary that replaced history) and event_msg (events for
// the UI, most of them repeating response items). Rollouts from before
// session_meta start with {"id", "timestamp", "instructions"} and hold
// bare response items.

type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// Legacy rollouts.
	ID         string `json:"id"`
	RecordType string `json:"record_type"`
}

type codexItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	// session_meta and turn_context.
	Cwd       string `json:"cwd"`
	Model     string `json:"model"`
	Timestamp string `json:"timestamp"`
}

type codexText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexEchoes are event_msg types that repeat what response items hold.
var codexEchoes = map[string]bool{
	"user_message": true, "agent_message": true, "agent_reasoning": true,
	"agent_reasoning_raw_content": true, "agent_reasoning_section_break": true,
	"token_count": true, "exec_command_begin": true, "exec_command_end": true,
	"exec_command_output_delta": true, "patch_apply_begin": true, "patch_apply_end": true,
	"mcp_tool_call_begin": true, "mcp_tool_call_end": true, "web_search_begin": true,
	"web_search_end": true, "task_started": true, "task_complete": true,
}

// codexReader builds one session from rollout lines.
type codexReader struct {
	s         *Session
	ids       callIDs
	rename    map[string]string
	open      *protocol.Message // the answer being built: text, reasoning, calls
	reasoning string            // reasoning waiting for its answer
}

func (c *codexReader) flush() {
	if c.open != nil {
		c.s.Messages = append(c.s.Messages, *c.open)
		c.open = nil
	}
}

func (c *codexReader) answer() *protocol.Message {
	if c.open == nil {
		c.open = &protocol.Message{Role: protocol.RoleAssistant, Reasoning: c.reasoning}
		c.reasoning = ""
	}
	return c.open
}

// readCodex reads one rollout file.
func readCodex(path string) (*Session, error) {
	c := &codexReader{s: &Session{Source: SourceCodex, Path: path}, rename: map[string]string{}}
	s := c.s
	first := true
	err := eachLine(path, func(line []byte) error {
		var l codexLine
		if err := json.Unmarshal(line, &l); err != nil {
			s.Notes = append(s.Notes, noteOf("codex line that is not a record", line))
			return nil
		}
		if t := parseTime(l.Timestamp); !t.IsZero() {
			if s.CreatedAt.IsZero() {
				s.CreatedAt = t
			}
			s.UpdatedAt = t
		}
		isFirst := first
		first = false
		switch {
		case l.Payload == nil && isFirst && l.ID != "" && l.Type == "":
			// A legacy rollout's header.
			s.SourceID = l.ID
			s.Notes = append(s.Notes, noteOf("codex session header", line))
			return nil
		case l.Payload == nil && l.RecordType != "":
			s.Notes = append(s.Notes, noteOf("codex "+l.RecordType+" record", line))
			return nil
		case l.Payload == nil && l.Type != "":
			// A legacy rollout's bare response item.
			c.item(line, line)
			return nil
		}
		switch l.Type {
		case "session_meta":
			var it codexItem
			json.Unmarshal(l.Payload, &it)
			s.SourceID, s.Workspace = it.ID, it.Cwd
			if t := parseTime(it.Timestamp); !t.IsZero() {
				s.CreatedAt = t
			}
		case "turn_context":
			var it codexItem
			json.Unmarshal(l.Payload, &it)
			if it.Model != "" {
				s.Model = it.Model
			}
			if s.Workspace == "" {
				s.Workspace = it.Cwd
			}
		case "response_item":
			c.item(l.Payload, line)
		case "event_msg":
			var it codexItem
			json.Unmarshal(l.Payload, &it)
			if !codexEchoes[it.Type] {
				s.Notes = append(s.Notes, noteOf("codex event "+it.Type, line))
			}
		default:
			s.Notes = append(s.Notes, noteOf("codex "+l.Type, line))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.flush()
	if s.SourceID == "" {
		s.SourceID = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	finish(s)
	return s, nil
}

// item maps one response item; line is the record it came in, for notes.
func (c *codexReader) item(payload, line []byte) {
	s := c.s
	var it codexItem
	if err := json.Unmarshal(payload, &it); err != nil {
		s.Notes = append(s.Notes, noteOf("codex response item that is not an object", line))
		return
	}
	switch it.Type {
	case "message":
		text := codexContent(it.Content)
		switch {
		case it.Role == "assistant":
			a := c.answer()
			a.Content = joinText(a.Content, text)
		case it.Role == "user" && !codexInjected(text):
			c.flush()
			s.Messages = append(s.Messages, protocol.Message{Role: protocol.RoleUser, Content: text})
		default:
			// Developer and system instructions, and the environment
			// codex adds to the first user turn: its own prompt.
			s.Notes = append(s.Notes, noteOf("codex "+it.Role+" message", line))
		}
	case "reasoning":
		text := codexContent(it.Summary)
		if content := codexContent(it.Content); content != "" {
			text = content
		}
		if text == "" {
			s.Notes = append(s.Notes, noteOf("codex encrypted reasoning", line))
			return
		}
		if c.open != nil && len(c.open.ToolCalls) == 0 && c.open.Content == "" {
			c.open.Reasoning = joinText(c.open.Reasoning, text)
		} else {
			c.flush()
			c.reasoning = joinText(c.reasoning, text)
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		args := jsonText(it.Arguments)
		name := it.Name
		switch it.Type {
		case "custom_tool_call":
			args = jsonText(it.Input)
		case "local_shell_call":
			args, name = jsonText(it.Action), "local_shell"
		}
		callID := it.CallID
		if callID == "" {
			callID = it.ID
		}
		id := c.ids.fresh(callID)
		c.rename[callID] = id
		a := c.answer()
		a.ToolCalls = append(a.ToolCalls, protocol.ToolCall{ID: id, Name: name, Arguments: args})
	case "function_call_output", "custom_tool_call_output":
		c.flush()
		id, ok := c.rename[it.CallID]
		if !ok {
			id = it.CallID
		}
		out, failed := codexOutput(it.Output)
		s.Messages = append(s.Messages, protocol.Message{Role: protocol.RoleTool, ToolCallID: id, Content: out, IsError: failed})
	default:
		s.Notes = append(s.Notes, noteOf("codex "+it.Type, line))
	}
}

// codexInjected reports the context codex adds as user messages.
func codexInjected(text string) bool {
	t := strings.TrimSpace(text)
	for _, tag := range []string{"<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions"} {
		if strings.HasPrefix(t, tag) {
			return true
		}
	}
	return false
}

// codexContent joins the text of content items (input_text, output_text,
// summary_text, reasoning_text, text); an image is shown as [image].
func codexContent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []codexText
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	var parts []string
	for _, it := range items {
		switch {
		case it.Text != "":
			parts = append(parts, it.Text)
		case strings.Contains(it.Type, "image"):
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// codexOutput reads a function call's output: a string, content items, or
// (older rollouts) {"content", "success"}.
func codexOutput(raw json.RawMessage) (string, bool) {
	var obj struct {
		Content *string `json:"content"`
		Success *bool   `json:"success"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content, obj.Success != nil && !*obj.Success
	}
	if text := codexContent(raw); text != "" || len(raw) == 0 {
		return text, false
	}
	return string(raw), false
}

// codexFiles lists the rollout files under a codex sessions directory.
func codexFiles(path string) ([]string, error) {
	files, err := listFiles(path, func(name string) bool {
		return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
	})
	if err != nil {
		return nil, fmt.Errorf("codex sessions in %s: %w", path, err)
	}
	return files, nil
}
