package sessionio

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The sources Read knows.
const (
	SourceClaude   = "claude"
	SourceCodex    = "codex"
	SourceOpencode = "opencode"
	SourceGemini   = "gemini"
	SourceMxClaw   = "mx-claw"
)

// Sources lists the sources in the order help text shows them.
func Sources() []string {
	return []string{SourceClaude, SourceCodex, SourceOpencode, SourceGemini, SourceMxClaw}
}

// Session is one session read from another agent's storage (or from an
// mx-claw export), mapped onto mx-claw's messages.
type Session struct {
	// Source names the agent; SourceID is its id for the session, which
	// with Source identifies it across imports.
	Source   string
	SourceID string
	// Path is the file or directory it was read from.
	Path string
	// Title is the agent's title for it, if it had one.
	Title string
	// Workspace is the directory the session worked in, if recorded.
	Workspace string
	// Model is the model the other agent used, for the record.
	Model     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Messages are in order, every tool call answered (see pair).
	Messages []protocol.Message
	// Notes are the records that map onto no message, kept as they were.
	Notes []Note
}

// Note is a record of the source that is not a message: kept, not sent.
type Note struct {
	// What says what the record is ("claude file-history-snapshot").
	What string
	// Raw is the record as it was read.
	Raw string
}

// MissingResult is the result given to a call the source recorded no
// result for.
const MissingResult = "Tool execution was interrupted before a result was recorded (imported session)."

// pair puts every tool result right after the answer that made its call,
// in call order; a call without a result gets MissingResult, and a result
// without a call (or a second result of one) becomes a note. It keeps the
// transcript valid for any model.
func pair(msgs []protocol.Message, notes *[]Note, source string) []protocol.Message {
	results := make(map[string]protocol.Message)
	called := make(map[string]bool)
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
	}
	var rest []protocol.Message
	for _, m := range msgs {
		if m.Role != protocol.RoleTool {
			rest = append(rest, m)
			continue
		}
		if _, dup := results[m.ToolCallID]; dup || !called[m.ToolCallID] {
			raw, _ := json.Marshal(m)
			*notes = append(*notes, Note{What: source + " tool result without its call", Raw: string(raw)})
			continue
		}
		results[m.ToolCallID] = m
	}
	out := make([]protocol.Message, 0, len(msgs))
	for _, m := range rest {
		out = append(out, m)
		for _, c := range m.ToolCalls {
			r, ok := results[c.ID]
			if !ok {
				r = protocol.Message{Role: protocol.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: MissingResult, IsError: true}
			}
			if r.ToolName == "" {
				r.ToolName = c.Name
			}
			out = append(out, r)
		}
	}
	return out
}

// callIDs gives every tool call an id unique in the session (some sources
// leave them out or repeat them) and points results at the new ids.
type callIDs struct {
	seen map[string]bool
	n    int
}

// fresh returns id if it is new in the session, or a new one.
func (c *callIDs) fresh(id string) string {
	if c.seen == nil {
		c.seen = make(map[string]bool)
	}
	if id == "" || c.seen[id] {
		for {
			c.n++
			id = fmt.Sprintf("imported_call_%d", c.n)
			if !c.seen[id] {
				break
			}
		}
	}
	c.seen[id] = true
	return id
}

// jsonText returns v as compact JSON text: a string stays as it is if it
// already holds JSON, anything else is encoded.
func jsonText(v json.RawMessage) string {
	if len(v) == 0 {
		return "{}"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if json.Valid([]byte(s)) {
			return s
		}
		b, _ := json.Marshal(map[string]string{"input": s})
		return string(b)
	}
	return string(v)
}

// titleOf makes a title from a first user message.
func titleOf(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	if r := []rune(text); len(r) > 60 {
		text = string(r[:59]) + "…"
	}
	return text
}

// finish fills what every reader leaves to the end: the title from the
// first user message, the pairing of calls and results, the times.
func finish(s *Session) {
	s.Messages = pair(s.Messages, &s.Notes, s.Source)
	if s.Title == "" {
		for _, m := range s.Messages {
			if m.Role == protocol.RoleUser && strings.TrimSpace(m.Content) != "" {
				s.Title = titleOf(m.Content)
				break
			}
		}
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = s.CreatedAt
	}
}

// parseTime reads an RFC 3339 time, or the zero time.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// noteOf keeps a raw record as a note.
func noteOf(what string, raw []byte) Note {
	return Note{What: what, Raw: string(raw)}
}
