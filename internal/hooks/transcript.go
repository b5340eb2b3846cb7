package hooks

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Transcript keeps a session's transcript file — the transcript_path hooks
// are given — in step with its stored messages, in Claude Code's JSONL
// format: one object per line with type "user" or "assistant", uuid and
// parentUuid chaining the lines, sessionId, cwd, timestamp and the
// message in Anthropic's shape (text and tool_use content blocks; tool
// results as tool_result blocks of a user line, with the structured
// result under toolUseResult). Tool names and inputs are Claude Code's,
// as in the hooks' input. System prompts and compaction summaries are
// not written, as Claude Code writes neither.
//
// A Transcript is written by one goroutine at a time.
type Transcript struct {
	path, sessionID, cwd string
	written              int    // messages already in the file
	parent               string // uuid of the last line written
	calls                map[string]protocol.ToolCall
	now                  func() time.Time
}

// NewTranscript returns the transcript of a session at path, for a
// workspace rooted at cwd. Nothing is written until Sync.
func NewTranscript(path, sessionID, cwd string) *Transcript {
	return &Transcript{path: path, sessionID: sessionID, cwd: cwd, calls: map[string]protocol.ToolCall{}, now: time.Now}
}

// Path returns the file's path.
func (t *Transcript) Path() string { return t.path }

// Sync writes the messages of msgs (the session's whole transcript, in
// order) that are not in the file yet. The first Sync writes the file
// anew, so it always matches what the store holds, whichever process
// wrote the earlier turns.
func (t *Transcript) Sync(msgs []protocol.Message) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if t.written == 0 || t.written > len(msgs) {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		t.written, t.parent = 0, ""
		clear(t.calls)
	}
	if t.written == len(msgs) && flags&os.O_TRUNC == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	f, err := os.OpenFile(t.path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, m := range msgs[t.written:] {
		for _, line := range t.lines(&m) {
			if err := enc.Encode(line); err != nil {
				f.Close()
				return fmt.Errorf("transcript: %w", err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("transcript: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	t.written = len(msgs)
	return nil
}

// line is one line of the transcript.
type line struct {
	ParentUUID    *string `json:"parentUuid"`
	IsSidechain   bool    `json:"isSidechain"`
	UserType      string  `json:"userType"`
	Cwd           string  `json:"cwd"`
	SessionID     string  `json:"sessionId"`
	Version       string  `json:"version"`
	Type          string  `json:"type"`
	Message       any     `json:"message"`
	ToolUseResult any     `json:"toolUseResult,omitempty"`
	UUID          string  `json:"uuid"`
	Timestamp     string  `json:"timestamp"`
}

// block is a content block of a message.
type block struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Input     any    `json:"input,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   any    `json:"content,omitempty"`
	IsError   *bool  `json:"is_error,omitempty"`
}

// lines returns the transcript lines of m (none for a system message).
func (t *Transcript) lines(m *protocol.Message) []line {
	mk := func(typ string, msg any) line {
		l := line{UserType: "external", Cwd: t.cwd, SessionID: t.sessionID, Version: "mx-claw", Type: typ,
			Message: msg, UUID: t.uuid(m.Seq, typ), Timestamp: t.now().UTC().Format(time.RFC3339Nano)}
		if t.parent != "" {
			p := t.parent
			l.ParentUUID = &p
		}
		t.parent = l.UUID
		return l
	}
	switch m.Role {
	case protocol.RoleUser:
		return []line{mk("user", map[string]any{"role": "user", "content": m.Content})}
	case protocol.RoleAssistant:
		var content []block
		if m.Content != "" {
			content = append(content, block{Type: "text", Text: m.Content})
		}
		stop := "end_turn"
		for _, c := range m.ToolCalls {
			t.calls[c.ID] = c
			stop = "tool_use"
			name, input := t.call(c)
			content = append(content, block{Type: "tool_use", ID: c.ID, Name: name, Input: input})
		}
		if content == nil {
			content = []block{}
		}
		msg := map[string]any{"id": fmt.Sprintf("msg_%s_%d", shortID(t.sessionID), m.Seq), "type": "message",
			"role": "assistant", "model": m.Model, "content": content, "stop_reason": stop}
		if u := m.Usage; u != nil {
			msg["usage"] = map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
				"cache_read_input_tokens": u.CachedTokens}
		}
		return []line{mk("assistant", msg)}
	case protocol.RoleTool:
		isErr := m.IsError
		b := block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content, IsError: &isErr}
		l := mk("user", map[string]any{"role": "user", "content": []block{b}})
		if c, ok := t.calls[m.ToolCallID]; ok {
			l.ToolUseResult = t.result(c, m)
		}
		return []line{l}
	}
	return nil
}

// call returns the name and input a tool call has in the transcript: the
// hooks' view of it (apply_patch, which hooks see as several calls, keeps
// its own).
func (t *Transcript) call(c protocol.ToolCall) (string, any) {
	vs := views(t.cwd, c.Name, json.RawMessage(c.Arguments))
	if len(vs) == 1 && c.Name != "apply_patch" {
		return vs[0].name, vs[0].input
	}
	var in any
	if json.Unmarshal([]byte(c.Arguments), &in) != nil {
		in = c.Arguments
	}
	return c.Name, in
}

// result returns the toolUseResult of a tool message answering c: the
// tool_response hooks get, or the error text for a failure, as Claude
// Code writes it.
func (t *Transcript) result(c protocol.ToolCall, m *protocol.Message) any {
	if m.IsError {
		return "Error: " + m.Content
	}
	vs := views(t.cwd, c.Name, json.RawMessage(c.Arguments))
	if len(vs) != 1 || c.Name == "apply_patch" {
		return m.Content
	}
	ev := Event{ToolName: c.Name, ToolResult: m.Content}
	r := ev.response(vs[0])
	delete(r, "isError")
	return r
}

// uuid derives a stable, UUID-shaped id for the line of message seq.
func (t *Transcript) uuid(seq int64, typ string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%s", t.sessionID, seq, typ))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// shortID returns the start of a session id, for message ids.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
