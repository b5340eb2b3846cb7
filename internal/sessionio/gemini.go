package sessionio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// gemini-cli keeps, under ~/.gemini/tmp/<project hash>/, each session's
// recording in chats/session-<time>-<id>.jsonl (older versions: one JSON
// object, session-….json) and the chats saved with /chat save in
// checkpoint-<tag>.json. A recording is a metadata record (sessionId,
// projectHash, startTime, ...), then message records by id (a later record
// with the same id replaces the earlier; {"$rewindTo": id} drops that
// message and the ones after it; {"$set": {...}} updates the metadata).
// A message has a type — user, gemini, info, warning, error — its content
// (a string or a list of parts), and for gemini its toolCalls (id, name,
// args, result as functionResponse parts, status) and thoughts. A saved
// chat is the model's history: a list of {role: user|model, parts} with
// text, functionCall and functionResponse parts.

type geminiRecord struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Timestamp   string            `json:"timestamp"`
	Content     json.RawMessage   `json:"content"`
	ToolCalls   []geminiToolCall  `json:"toolCalls"`
	Thoughts    []geminiThought   `json:"thoughts"`
	Model       string            `json:"model"`
	SessionID   string            `json:"sessionId"`
	ProjectHash string            `json:"projectHash"`
	StartTime   string            `json:"startTime"`
	LastUpdated string            `json:"lastUpdated"`
	Summary     string            `json:"summary"`
	Messages    []json.RawMessage `json:"messages"`
	RewindTo    *string           `json:"$rewindTo"`
	Set         json.RawMessage   `json:"$set"`
}

type geminiToolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Result json.RawMessage `json:"result"`
	Status string          `json:"status"`
}

type geminiThought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiFiles lists recordings and saved chats under a gemini-cli tmp
// directory.
func geminiFiles(path string) ([]string, error) {
	files, err := listFiles(path, func(name string) bool {
		return (strings.HasPrefix(name, "session-") && (strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".json"))) ||
			(strings.HasPrefix(name, "checkpoint-") && strings.HasSuffix(name, ".json"))
	})
	if err != nil {
		return nil, fmt.Errorf("gemini sessions in %s: %w", path, err)
	}
	return files, nil
}

// readGemini reads a recording (JSONL or legacy JSON) or a saved chat.
func readGemini(path string) (*Session, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if strings.HasPrefix(filepath.Base(path), "checkpoint-") || bytes.HasPrefix(trimmed, []byte("[")) {
		return readGeminiSaved(path, trimmed)
	}
	s := &Session{Source: SourceGemini, Path: path}
	var order []string
	byID := make(map[string]geminiRecord)
	raws := make(map[string][]byte)
	meta := func(r geminiRecord) {
		if r.SessionID != "" {
			s.SourceID = r.SessionID
		}
		if r.Summary != "" {
			s.Title = r.Summary
		}
		if t := parseTime(r.StartTime); !t.IsZero() {
			s.CreatedAt = t
		}
		if t := parseTime(r.LastUpdated); !t.IsZero() {
			s.UpdatedAt = t
		}
	}
	add := func(raw []byte) {
		var r geminiRecord
		if err := json.Unmarshal(raw, &r); err != nil {
			s.Notes = append(s.Notes, noteOf("gemini line that is not a record", raw))
			return
		}
		switch {
		case r.RewindTo != nil:
			for i, id := range order {
				if id == *r.RewindTo {
					for _, gone := range order[i:] {
						s.Notes = append(s.Notes, noteOf("gemini message taken back by a rewind", raws[gone]))
						delete(byID, gone)
					}
					order = order[:i]
					break
				}
			}
		case r.Set != nil:
			var m geminiRecord
			json.Unmarshal(r.Set, &m)
			meta(m)
		case r.ID != "":
			if _, seen := byID[r.ID]; !seen {
				order = append(order, r.ID)
			}
			byID[r.ID], raws[r.ID] = r, raw
		case r.SessionID != "":
			meta(r)
			// A legacy recording holds its messages in one object.
			for _, m := range r.Messages {
				var mr geminiRecord
				if json.Unmarshal(m, &mr) == nil && mr.ID != "" {
					if _, seen := byID[mr.ID]; !seen {
						order = append(order, mr.ID)
					}
					byID[mr.ID], raws[mr.ID] = mr, m
				}
			}
		default:
			s.Notes = append(s.Notes, noteOf("gemini record", raw))
		}
	}
	if bytes.HasPrefix(trimmed, []byte("{")) && json.Valid(trimmed) {
		add(trimmed)
	} else if err := eachLine(path, func(line []byte) error { add(line); return nil }); err != nil {
		return nil, err
	}
	ids := &callIDs{}
	for _, id := range order {
		r := byID[id]
		if t := parseTime(r.Timestamp); !t.IsZero() && s.CreatedAt.IsZero() {
			s.CreatedAt = t
		}
		text := geminiText(r.Content)
		switch r.Type {
		case "user":
			s.Messages = append(s.Messages, protocol.Message{Role: protocol.RoleUser, Content: text})
		case "gemini":
			if r.Model != "" {
				s.Model = r.Model
			}
			a := protocol.Message{Role: protocol.RoleAssistant, Content: text}
			for _, th := range r.Thoughts {
				a.Reasoning = joinText(a.Reasoning, strings.TrimSpace(th.Subject+"\n"+th.Description))
			}
			var results []protocol.Message
			for _, c := range r.ToolCalls {
				cid := ids.fresh(c.ID)
				a.ToolCalls = append(a.ToolCalls, protocol.ToolCall{ID: cid, Name: c.Name, Arguments: jsonText(c.Args)})
				if len(c.Result) > 0 && string(c.Result) != "null" {
					out, failed := geminiResult(c.Result)
					failed = failed || c.Status == "error" || c.Status == "cancelled"
					results = append(results, protocol.Message{Role: protocol.RoleTool, ToolCallID: cid, ToolName: c.Name, Content: out, IsError: failed})
				}
			}
			s.Messages = append(s.Messages, a)
			s.Messages = append(s.Messages, results...)
		default:
			s.Notes = append(s.Notes, noteOf("gemini "+r.Type+" message", raws[id]))
		}
	}
	if s.SourceID == "" {
		s.SourceID = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	finish(s)
	return s, nil
}

// readGeminiSaved reads a chat saved with /chat save: the model's history.
func readGeminiSaved(path string, data []byte) (*Session, error) {
	var history []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	}
	if err := json.Unmarshal(data, &history); err != nil {
		var wrapped struct {
			History json.RawMessage `json:"history"`
		}
		if json.Unmarshal(data, &wrapped) != nil || json.Unmarshal(wrapped.History, &history) != nil {
			return nil, fmt.Errorf("%s: not a gemini saved chat: %w", path, err)
		}
	}
	tag := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "checkpoint-"), ".json")
	s := &Session{Source: SourceGemini, Path: path, SourceID: "saved:" + filepath.Base(filepath.Dir(path)) + ":" + tag, Title: tag}
	if fi, err := os.Stat(path); err == nil {
		s.CreatedAt, s.UpdatedAt = fi.ModTime().UTC(), fi.ModTime().UTC()
	}
	ids := &callIDs{}
	pending := make(map[string][]string) // function name → call ids waiting for a response
	for _, c := range history {
		switch c.Role {
		case "model":
			a := protocol.Message{Role: protocol.RoleAssistant}
			for _, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					id := ids.fresh(p.FunctionCall.ID)
					pending[p.FunctionCall.Name] = append(pending[p.FunctionCall.Name], id)
					a.ToolCalls = append(a.ToolCalls, protocol.ToolCall{ID: id, Name: p.FunctionCall.Name, Arguments: jsonText(p.FunctionCall.Args)})
				case p.Thought:
					a.Reasoning = joinText(a.Reasoning, p.Text)
				default:
					a.Content = joinText(a.Content, p.Text)
				}
			}
			s.Messages = append(s.Messages, a)
		default:
			u := protocol.Message{Role: protocol.RoleUser}
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil {
					id := ""
					if q := pending[fr.Name]; len(q) > 0 {
						id, pending[fr.Name] = q[0], q[1:]
					}
					out, failed := geminiResponse(fr.Response)
					s.Messages = append(s.Messages, protocol.Message{Role: protocol.RoleTool, ToolCallID: id, ToolName: fr.Name, Content: out, IsError: failed})
					continue
				}
				u.Content = joinText(u.Content, p.Text)
			}
			if u.Content != "" {
				s.Messages = append(s.Messages, u)
			}
		}
	}
	finish(s)
	return s, nil
}

// geminiText joins the text parts of content (a string, a part or parts).
func geminiText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []geminiPart
	if json.Unmarshal(raw, &parts) != nil {
		var one geminiPart
		if json.Unmarshal(raw, &one) != nil {
			return ""
		}
		parts = []geminiPart{one}
	}
	var out []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// geminiResult reads a tool call's recorded result: functionResponse
// parts (their output or error), or text.
func geminiResult(raw json.RawMessage) (string, bool) {
	var parts []geminiPart
	if json.Unmarshal(raw, &parts) != nil {
		var one geminiPart
		if json.Unmarshal(raw, &one) != nil {
			return geminiText(raw), false
		}
		parts = []geminiPart{one}
	}
	var out []string
	failed := false
	for _, p := range parts {
		switch {
		case p.FunctionResponse != nil:
			text, bad := geminiResponse(p.FunctionResponse.Response)
			out = append(out, text)
			failed = failed || bad
		case p.Text != "":
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n"), failed
}

// geminiResponse reads a functionResponse's response: {"output": …} or
// {"error": …}, else its JSON.
func geminiResponse(raw json.RawMessage) (string, bool) {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &r) == nil {
		switch {
		case r.Error != nil:
			return *r.Error, true
		case r.Output != nil:
			return *r.Output, false
		}
	}
	return string(raw), false
}
