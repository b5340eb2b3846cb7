package sessionio

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Claude Code keeps each session as a JSONL file under
// ~/.claude/projects/<the project's path, "/" turned into "-">/<id>.jsonl.
// Each line is a record with a "type": "user" and "assistant" records carry
// an Anthropic Messages API message (content a string or blocks: text,
// thinking, tool_use, tool_result, image); an answer streamed in several
// blocks comes as several records sharing message.id. "summary" records
// title the session; "system", "file-history-snapshot" and the like are
// the agent's own bookkeeping. Records of subagents are marked
// isSidechain.

// claudeRecord is the part of a Claude Code record the import reads.
type claudeRecord struct {
	Type        string         `json:"type"`
	SessionID   string         `json:"sessionId"`
	Cwd         string         `json:"cwd"`
	Timestamp   string         `json:"timestamp"`
	IsSidechain bool           `json:"isSidechain"`
	Summary     string         `json:"summary"`
	Message     *claudeMessage `json:"message"`
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// readClaude reads one Claude Code session file.
func readClaude(path string) (*Session, error) {
	s := &Session{Source: SourceClaude, Path: path}
	ids := &callIDs{}
	rename := map[string]string{} // the source's call id → ours
	lastAnswer := ""              // message.id of the assistant message being built
	err := eachLine(path, func(line []byte) error {
		var r claudeRecord
		if err := json.Unmarshal(line, &r); err != nil {
			s.Notes = append(s.Notes, noteOf("claude line that is not a record", line))
			return nil
		}
		if s.SourceID == "" && r.SessionID != "" {
			s.SourceID = r.SessionID
		}
		if s.Workspace == "" && r.Cwd != "" {
			s.Workspace = r.Cwd
		}
		if t := parseTime(r.Timestamp); !t.IsZero() {
			if s.CreatedAt.IsZero() {
				s.CreatedAt = t
			}
			s.UpdatedAt = t
		}
		switch {
		case r.Type == "summary" && r.Summary != "":
			s.Title = r.Summary
			return nil
		case (r.Type == "user" || r.Type == "assistant") && r.Message != nil && !r.IsSidechain:
		default:
			what := "claude " + r.Type
			if r.IsSidechain {
				what = "claude subagent " + r.Type
			}
			s.Notes = append(s.Notes, noteOf(what, line))
			return nil
		}
		m := r.Message
		if m.Model != "" && m.Model != "<synthetic>" {
			s.Model = m.Model
		}
		blocks, text := claudeBlocks(m.Content)
		if r.Type == "assistant" {
			msg := protocol.Message{Role: protocol.RoleAssistant, Content: text}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					msg.Content = joinText(msg.Content, b.Text)
				case "thinking":
					msg.Reasoning = joinText(msg.Reasoning, b.Thinking)
				case "tool_use":
					id := ids.fresh(b.ID)
					rename[b.ID] = id
					msg.ToolCalls = append(msg.ToolCalls, protocol.ToolCall{ID: id, Name: b.Name, Arguments: jsonText(b.Input)})
				default:
					raw, _ := json.Marshal(b)
					s.Notes = append(s.Notes, noteOf("claude assistant block "+b.Type, raw))
				}
			}
			// The blocks of one streamed answer share its id: one message.
			if n := len(s.Messages); n > 0 && m.ID != "" && m.ID == lastAnswer && s.Messages[n-1].Role == protocol.RoleAssistant {
				prev := &s.Messages[n-1]
				prev.Content = joinText(prev.Content, msg.Content)
				prev.Reasoning = joinText(prev.Reasoning, msg.Reasoning)
				prev.ToolCalls = append(prev.ToolCalls, msg.ToolCalls...)
				return nil
			}
			lastAnswer = m.ID
			s.Messages = append(s.Messages, msg)
			return nil
		}
		lastAnswer = ""
		user := protocol.Message{Role: protocol.RoleUser, Content: text}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				user.Content = joinText(user.Content, b.Text)
			case "tool_result":
				id, ok := rename[b.ToolUseID]
				if !ok {
					id = b.ToolUseID
				}
				s.Messages = append(s.Messages, protocol.Message{Role: protocol.RoleTool, ToolCallID: id,
					Content: claudeToolOutput(b.Content), IsError: b.IsError})
			case "image":
				user.Content = joinText(user.Content, "[image]")
			default:
				raw, _ := json.Marshal(b)
				s.Notes = append(s.Notes, noteOf("claude user block "+b.Type, raw))
			}
		}
		if strings.TrimSpace(user.Content) != "" {
			s.Messages = append(s.Messages, user)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.SourceID == "" {
		s.SourceID = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	finish(s)
	return s, nil
}

// claudeBlocks reads message content: a string (returned as text) or an
// array of blocks (returned as blocks, text empty).
func claudeBlocks(raw json.RawMessage) ([]claudeBlock, string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return nil, s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, string(raw)
	}
	return blocks, ""
}

// claudeToolOutput reads a tool_result's content: a string, or blocks
// whose text is joined (an image is shown as [image]).
func claudeToolOutput(raw json.RawMessage) string {
	blocks, text := claudeBlocks(raw)
	var parts []string
	if text != "" {
		parts = append(parts, text)
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// joinText appends b to a, a blank line between them.
func joinText(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n\n" + b
}

// claudeFiles lists the session files under a Claude Code projects
// directory (or the one file given).
func claudeFiles(path string) ([]string, error) {
	files, err := listFiles(path, func(name string) bool { return strings.HasSuffix(name, ".jsonl") })
	if err != nil {
		return nil, fmt.Errorf("claude sessions in %s: %w", path, err)
	}
	return files, nil
}
