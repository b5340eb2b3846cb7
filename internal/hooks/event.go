package hooks

import (
	"bytes"
	"encoding/json"
)

// Event is what happened, as hooks are told about it. Name, SessionID and
// Cwd are always needed; the other fields matter for some events only.
type Event struct {
	// Name is the event.
	Name EventName
	// SessionID is the session's id.
	SessionID string
	// TranscriptPath is a file holding the conversation, if there is one;
	// it may be empty.
	TranscriptPath string
	// Cwd is the workspace root: the hooks' working directory and the
	// value of MX_CLAW_PROJECT_DIR and CLAUDE_PROJECT_DIR.
	Cwd string
	// PermissionMode is the session's permission mode, if known.
	PermissionMode string
	// ToolName is the mx-claw tool name (PreToolUse, PostToolUse).
	ToolName string
	// ToolInput is the call's arguments, a JSON object (PreToolUse,
	// PostToolUse). Empty is sent as {}; invalid JSON is sent as a string.
	ToolInput json.RawMessage
	// ToolResponse is the tool's result (PostToolUse). Empty is sent as
	// null; invalid JSON is sent as a string.
	ToolResponse json.RawMessage
	// Prompt is the user's message (UserPromptSubmit).
	Prompt string
	// Source says how the session started (SessionStart): "startup",
	// "resume", "clear" or "compact". SessionStart matchers match it.
	Source string
	// Trigger says why compaction runs (PreCompact): "manual" or "auto".
	// PreCompact matchers match it.
	Trigger string
	// CustomInstructions are the user's instructions for a manual
	// compaction (PreCompact).
	CustomInstructions string
	// StopHookActive says the turn is already going on because a Stop hook
	// blocked it (Stop), so that a hook can avoid keeping it going forever.
	StopHookActive bool
}

// input is the JSON object on a hook's stdin, with Claude Code's names.
type input struct {
	SessionID          string          `json:"session_id"`
	TranscriptPath     string          `json:"transcript_path"`
	Cwd                string          `json:"cwd"`
	PermissionMode     string          `json:"permission_mode,omitempty"`
	HookEventName      EventName       `json:"hook_event_name"`
	ToolName           *string         `json:"tool_name,omitempty"`
	ToolInput          json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse       json.RawMessage `json:"tool_response,omitempty"`
	Prompt             *string         `json:"prompt,omitempty"`
	Source             string          `json:"source,omitempty"`
	Trigger            string          `json:"trigger,omitempty"`
	CustomInstructions *string         `json:"custom_instructions,omitempty"`
	StopHookActive     *bool           `json:"stop_hook_active,omitempty"`
}

// stdin returns the JSON object a hook receives for e.
func (e Event) stdin() ([]byte, error) {
	in := input{
		SessionID:      e.SessionID,
		TranscriptPath: e.TranscriptPath,
		Cwd:            e.Cwd,
		PermissionMode: e.PermissionMode,
		HookEventName:  e.Name,
	}
	switch e.Name {
	case PreToolUse, PostToolUse:
		in.ToolName = &e.ToolName
		in.ToolInput = rawOr(e.ToolInput, "{}")
		if e.Name == PostToolUse {
			in.ToolResponse = rawOr(e.ToolResponse, "null")
		}
	case UserPromptSubmit:
		in.Prompt = &e.Prompt
	case SessionStart:
		in.Source = e.Source
	case PreCompact:
		in.Trigger = e.Trigger
		in.CustomInstructions = &e.CustomInstructions
	case Stop:
		in.StopHookActive = &e.StopHookActive
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rawOr returns raw if it is valid JSON, def if it is empty, and raw as a
// JSON string otherwise.
func rawOr(raw json.RawMessage, def string) json.RawMessage {
	switch {
	case len(bytes.TrimSpace(raw)) == 0:
		return json.RawMessage(def)
	case json.Valid(raw):
		return raw
	}
	s, _ := json.Marshal(string(raw))
	return s
}
