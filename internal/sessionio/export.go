package sessionio

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ExportVersion is the version of the JSONL export format.
const ExportVersion = 1

// exportLine is one line of a JSONL export: {"type": "mx-claw.session",
// "version", "session"} first, then a "message" line per message, a
// "rewind" line per conversation rewind and an "event" line per stored
// event. Every string in it has been through the Redactor.
type exportLine struct {
	Type    string          `json:"type"`
	Version int             `json:"version,omitempty"`
	Session json.RawMessage `json:"session,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
	Rewind  json.RawMessage `json:"rewind,omitempty"`
	Event   json.RawMessage `json:"event,omitempty"`
}

// Export is what an export holds.
type Export struct {
	Session  *protocol.Session
	Messages []protocol.Message
	Rewinds  []protocol.Rewind
	Events   []protocol.Event
}

// WriteJSONL writes e as JSONL, secrets redacted.
func WriteJSONL(w io.Writer, e Export, r *Redactor) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	put := func(l exportLine) error { return enc.Encode(l) }
	sess, err := r.Value(e.Session)
	if err != nil {
		return err
	}
	if err := put(exportLine{Type: "mx-claw.session", Version: ExportVersion, Session: sess}); err != nil {
		return err
	}
	for i := range e.Messages {
		m, err := r.Value(&e.Messages[i])
		if err != nil {
			return err
		}
		if err := put(exportLine{Type: "message", Message: m}); err != nil {
			return err
		}
	}
	for i := range e.Rewinds {
		rw, _ := json.Marshal(e.Rewinds[i])
		if err := put(exportLine{Type: "rewind", Rewind: rw}); err != nil {
			return err
		}
	}
	for i := range e.Events {
		ev, err := r.Value(&e.Events[i])
		if err != nil {
			return err
		}
		if err := put(exportLine{Type: "event", Event: ev}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteMarkdown writes e's transcript for people to read, secrets
// redacted.
func WriteMarkdown(w io.Writer, e Export, r *Redactor) error {
	bw := bufio.NewWriter(w)
	s := e.Session
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	fmt.Fprintf(bw, "# %s\n\n", r.String(title))
	fmt.Fprintf(bw, "- Session: `%s`\n- Workspace: `%s`\n- Model: `%s`\n- Created: %s\n- Updated: %s\n",
		s.ID, r.String(s.Workspace), s.Model, s.CreatedAt.Format(time.RFC3339), s.UpdatedAt.Format(time.RFC3339))
	if s.ParentID != "" {
		fmt.Fprintf(bw, "- Forked from: `%s`\n", s.ParentID)
	}
	for _, m := range e.Messages {
		switch m.Role {
		case protocol.RoleSystem:
			fmt.Fprintf(bw, "\n## System (#%d)\n\n<details><summary>instructions</summary>\n\n%s\n\n</details>\n", m.Seq, fence(r.String(m.Content), "text"))
		case protocol.RoleUser:
			fmt.Fprintf(bw, "\n## User (#%d)\n\n%s\n", m.Seq, r.String(m.Content))
		case protocol.RoleAssistant:
			who := "Assistant"
			if m.Model != "" {
				who += " · " + m.Model
			}
			fmt.Fprintf(bw, "\n## %s (#%d)\n\n", who, m.Seq)
			if m.Reasoning != "" {
				fmt.Fprintf(bw, "<details><summary>reasoning</summary>\n\n%s\n\n</details>\n\n", r.String(m.Reasoning))
			}
			if m.Content != "" {
				fmt.Fprintf(bw, "%s\n", r.String(m.Content))
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(bw, "\n**Tool call** `%s` (`%s`)\n\n%s\n", c.Name, c.ID, fence(r.String(c.Arguments), "json"))
			}
		case protocol.RoleTool:
			status := ""
			if m.IsError {
				status = " — error"
			}
			fmt.Fprintf(bw, "\n**Result** of `%s` (`%s`)%s\n\n%s\n", m.ToolName, m.ToolCallID, status, fence(r.String(m.Content), "text"))
		}
	}
	return bw.Flush()
}

// fence puts text in a fenced code block long enough not to be closed by
// the text itself.
func fence(text, lang string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}

// readMxClaw reads an export written by WriteJSONL.
func readMxClaw(path string) (*Session, error) {
	s := &Session{Source: SourceMxClaw, Path: path}
	first := true
	err := eachLine(path, func(line []byte) error {
		var l exportLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("%s: not an mx-claw export: %w", path, err)
		}
		if first && l.Type != "mx-claw.session" {
			return fmt.Errorf("%s: not an mx-claw export (it starts with %q)", path, l.Type)
		}
		first = false
		switch l.Type {
		case "mx-claw.session":
			if l.Version > ExportVersion {
				return fmt.Errorf("%s: export version %d is newer than this mx-claw reads (%d)", path, l.Version, ExportVersion)
			}
			var sess protocol.Session
			if err := json.Unmarshal(l.Session, &sess); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			s.SourceID, s.Title, s.Workspace, s.Model = sess.ID, sess.Title, sess.Workspace, sess.Model
			s.CreatedAt, s.UpdatedAt = sess.CreatedAt, sess.UpdatedAt
		case "message":
			var m protocol.Message
			if err := json.Unmarshal(l.Message, &m); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			m.Seq = 0
			s.Messages = append(s.Messages, m)
		case "event":
			// The events were the session's stream; the transcript is what
			// an import restores.
		default:
			s.Notes = append(s.Notes, noteOf("mx-claw export "+l.Type, line))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if first {
		return nil, fmt.Errorf("%s: empty", path)
	}
	finish(s)
	return s, nil
}
