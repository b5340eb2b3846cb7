package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Caps on what a tool call's content carries to the client.
const (
	maxResultText = 16 << 10
	maxOutputText = 64 << 10
)

// mapper turns one session's protocol.Events into session/update payloads:
// the one mapping from mx-claw's events to ACP. It remembers what it needs
// across events — which tool calls the client has been told of, and what
// a running command printed so far. A mapper is used by one goroutine at
// a time.
type mapper struct {
	// cwd is the session's workspace, for absolute paths.
	cwd string
	// replay says the events are stored ones (session/load): messages come
	// complete, as there are no deltas.
	replay bool
	calls  map[string]*callState
}

// callState is what the client knows of one tool call.
type callState struct {
	announced bool
	info      toolInfo
	output    string
}

func newMapper(cwd string, replay bool) *mapper {
	return &mapper{cwd: cwd, replay: replay, calls: make(map[string]*callState)}
}

// updates returns the session updates an event makes, often none.
func (m *mapper) updates(e protocol.Event) []sessionUpdate {
	switch e.Type {
	case protocol.EventMessageDelta:
		if !m.replay && e.Text != "" {
			return []sessionUpdate{chunk("agent_message_chunk", e.Text)}
		}
	case protocol.EventReasoningDelta:
		if !m.replay && e.Text != "" {
			return []sessionUpdate{chunk("agent_thought_chunk", e.Text)}
		}
	case protocol.EventMessageCompleted:
		if m.replay && e.Message != nil {
			return m.message(e.Message)
		}
	case protocol.EventPermissionRequested:
		if _, announced := m.announce(e, "pending"); announced != nil {
			return []sessionUpdate{*announced}
		}
	case protocol.EventToolStarted:
		c, announced := m.announce(e, "in_progress")
		if announced != nil {
			return []sessionUpdate{*announced}
		}
		return []sessionUpdate{toolUpdate("tool_call_update", toolCall{ToolCallID: e.ToolCallID, Status: "in_progress",
			Content: c.info.content})}
	case protocol.EventToolOutput:
		c := m.calls[e.ToolCallID]
		if c == nil || e.Text == "" {
			return nil
		}
		c.output = tail(c.output+e.Text, maxOutputText)
		return []sessionUpdate{toolUpdate("tool_call_update", toolCall{ToolCallID: e.ToolCallID,
			Content: append(append([]toolCallContent(nil), c.info.content...), textContent(c.output))})}
	case protocol.EventToolCompleted:
		return m.completed(e)
	case protocol.EventTodoUpdated:
		entries := make([]planEntry, len(e.Todos))
		for i, td := range e.Todos {
			entries[i] = planEntry{Content: td.Content, Priority: "medium", Status: planStatus(td.Status)}
		}
		return []sessionUpdate{{SessionUpdate: "plan", Entries: entries}}
	}
	return nil
}

// message replays a stored message.
func (m *mapper) message(msg *protocol.Message) []sessionUpdate {
	var out []sessionUpdate
	switch msg.Role {
	case protocol.RoleUser:
		if msg.Content != "" {
			out = append(out, chunk("user_message_chunk", msg.Content))
		}
	case protocol.RoleAssistant:
		if msg.Reasoning != "" {
			out = append(out, chunk("agent_thought_chunk", msg.Reasoning))
		}
		if msg.Content != "" {
			out = append(out, chunk("agent_message_chunk", msg.Content))
		}
	}
	return out
}

// announce makes sure the client knows of the call of e: the first time it
// returns a tool_call with status, else nil.
func (m *mapper) announce(e protocol.Event, status string) (*callState, *sessionUpdate) {
	c := m.calls[e.ToolCallID]
	if c == nil {
		c = &callState{info: describe(e.ToolName, e.Arguments, e.Summary, m.cwd)}
		m.calls[e.ToolCallID] = c
	}
	if c.announced {
		return c, nil
	}
	c.announced = true
	u := toolUpdate("tool_call", toolCall{ToolCallID: e.ToolCallID, Title: c.info.title, Kind: c.info.kind,
		Status: status, Content: c.info.content, Locations: c.info.locations, RawInput: e.Arguments})
	return c, &u
}

// completed ends a tool call: its status, and its content — the diff of an
// edit that worked, else the result the model read.
func (m *mapper) completed(e protocol.Event) []sessionUpdate {
	ok := e.OK == nil || *e.OK
	status := "completed"
	if !ok {
		status = "failed"
	}
	result := e.Preview
	if e.Message != nil {
		result = e.Message.Content
	}
	c := m.calls[e.ToolCallID]
	if c == nil {
		c = &callState{info: describe(e.ToolName, e.Arguments, e.Summary, m.cwd)}
		m.calls[e.ToolCallID] = c
	}
	var content []toolCallContent
	switch {
	case ok && c.info.kind == "edit" && len(c.info.content) > 0:
		content = c.info.content
	case c.info.kind == "execute":
		content = append(append(content, c.info.content...), textContent(head(result, maxResultText)))
	default:
		if result != "" {
			content = []toolCallContent{textContent(head(result, maxResultText))}
		}
	}
	delete(m.calls, e.ToolCallID)
	tc := toolCall{ToolCallID: e.ToolCallID, Status: status, Content: content}
	if !c.announced {
		// A call refused before it ran: unknown tool, invalid arguments,
		// a deny rule, a duplicate.
		tc.Title, tc.Kind, tc.Locations = c.info.title, c.info.kind, c.info.locations
		return []sessionUpdate{toolUpdate("tool_call", tc)}
	}
	return []sessionUpdate{toolUpdate("tool_call_update", tc)}
}

// toolInfo is how the client shows a tool call.
type toolInfo struct {
	kind, title string
	locations   []location
	content     []toolCallContent
}

// describe tells the client what a call of the tool name with args does:
// its kind, title and the files it touches; for edits, the diff.
func describe(name string, raw json.RawMessage, summary, cwd string) toolInfo {
	var a struct {
		Path      string `json:"path"`
		Offset    *int   `json:"offset"`
		Content   string `json:"content"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Patch     string `json:"patch"`
		Command   string `json:"command"`
	}
	_ = json.Unmarshal(raw, &a)
	info := toolInfo{kind: "other", title: summary}
	if info.title == "" {
		info.title = name
	}
	abs := ""
	if a.Path != "" {
		abs = a.Path
		if !filepath.IsAbs(abs) && cwd != "" {
			abs = filepath.Join(cwd, abs)
		}
		info.locations = []location{{Path: abs}}
	}
	switch name {
	case "read_file":
		info.kind = "read"
		if a.Offset != nil && len(info.locations) == 1 {
			line := *a.Offset
			info.locations[0].Line = &line
		}
	case "list_dir", "read_tool_output":
		info.kind = "read"
	case "glob", "grep", "search_history":
		info.kind = "search"
	case "write_file":
		info.kind = "edit"
		if abs != "" {
			info.content = []toolCallContent{{Type: "diff", Path: abs, NewText: &a.Content}}
		}
	case "edit_file":
		info.kind = "edit"
		if abs != "" {
			info.content = []toolCallContent{{Type: "diff", Path: abs, OldText: &a.OldString, NewText: &a.NewString}}
		}
	case "apply_patch":
		info.kind = "edit"
		info.locations = patchFiles(a.Patch, cwd)
		if a.Patch != "" {
			info.content = []toolCallContent{textContent("```diff\n" + head(a.Patch, maxResultText) + "\n```")}
		}
	case "run_command":
		info.kind = "execute"
		if a.Command != "" {
			info.content = []toolCallContent{textContent("```sh\n" + head(a.Command, maxResultText) + "\n```")}
		}
	case "todo_write":
		info.kind = "think"
	case "web_fetch":
		info.kind = "fetch"
	}
	return info
}

// patchFiles returns the files an apply_patch patch names.
func patchFiles(patch, cwd string) []location {
	var out []location
	for _, line := range strings.Split(patch, "\n") {
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				path := strings.TrimSpace(rest)
				if !filepath.IsAbs(path) && cwd != "" {
					path = filepath.Join(cwd, path)
				}
				out = append(out, location{Path: path})
			}
		}
	}
	return out
}

func chunk(kind, text string) sessionUpdate {
	b := textBlock(text)
	return sessionUpdate{SessionUpdate: kind, Content: &b}
}

func textContent(s string) toolCallContent {
	b := textBlock(s)
	return toolCallContent{Type: "content", Content: &b}
}

// planStatus maps a todo's status onto ACP's (the same names; anything
// else is pending).
func planStatus(s protocol.TodoStatus) string {
	switch s {
	case protocol.TodoInProgress, protocol.TodoCompleted:
		return string(s)
	}
	return string(protocol.TodoPending)
}

// head returns at most max bytes of the start of s, on a rune boundary,
// marking a cut.
func head(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[… cut]"
}

// tail returns at most max bytes of the end of s, on a rune boundary.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:]
}
