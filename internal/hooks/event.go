package hooks

import (
	"bytes"
	"encoding/json"
)

// Event is what happened, as hooks are told about it. Name, SessionID and
// Cwd are always needed; the other fields matter for some events only.
// Tool calls are given as mx-claw has them; the hooks see them as Claude
// Code would have made them (see the package doc).
type Event struct {
	// Name is the event.
	Name EventName
	// SessionID is the session's id.
	SessionID string
	// TranscriptPath is the session's transcript in Claude Code's JSONL
	// format (see [WriteTranscript]), or "".
	TranscriptPath string
	// Cwd is the workspace root: the hooks' working directory and the
	// value of MX_CLAW_PROJECT_DIR and CLAUDE_PROJECT_DIR.
	Cwd string
	// PermissionMode is the session's permission mode, in Claude Code's
	// spelling (bypassPermissions, not bypass), if known.
	PermissionMode string
	// Model is the session's model (SessionStart).
	Model string

	// ToolName is the mx-claw tool name (tool events).
	ToolName string
	// ToolUseID is the call's id (tool events).
	ToolUseID string
	// ToolInput is the call's arguments, a JSON object (tool events).
	ToolInput json.RawMessage
	// ToolResult is the result the model got (PostToolUse: the output;
	// PostToolUseFailure: the error).
	ToolResult string
	// ToolFailed says the call failed (PostToolUseFailure).
	ToolFailed bool
	// Interrupted says the call was cut short: a timeout or the user
	// (PostToolUseFailure's is_interrupt).
	Interrupted bool
	// Before is what the files the call wrote held before it ran
	// ([Runner.Snapshot]); nil leaves originalFile out of tool_response.
	Before *Snapshot

	// Prompt is the user's message (UserPromptSubmit).
	Prompt string
	// Source says how the session started (SessionStart): "startup",
	// "resume", "clear" or "compact". SessionStart matchers match it.
	Source string
	// Trigger says why compaction runs (PreCompact, PostCompact):
	// "manual" or "auto". Their matchers match it.
	Trigger string
	// CustomInstructions are the user's instructions for a manual
	// compaction (PreCompact).
	CustomInstructions string
	// CompactSummary is the summary a compaction made (PostCompact).
	CompactSummary string
	// StopHookActive says the turn is already going on because a Stop hook
	// blocked it (Stop), so that a hook can avoid keeping it going forever.
	StopHookActive bool
	// LastAssistantMessage is the model's final answer (Stop).
	LastAssistantMessage string
	// Message and Title are what a Notification says; NotificationType
	// is its kind ("permission_prompt"), which its matchers match.
	Message, Title, NotificationType string
	// Reason says why a session ends (SessionEnd: "clear", "logout",
	// "prompt_input_exit" or "other"); SessionEnd matchers match it.
	Reason string
	// AgentID and AgentType name the subagent an event happens in: its
	// session id and its type (SubagentStart and SubagentStop matchers
	// match the type). Empty in a user's session.
	AgentID, AgentType string
	// AgentTranscriptPath is the subagent's own transcript
	// (SubagentStop); TranscriptPath is then its parent's.
	AgentTranscriptPath string
}

// input is the JSON object on a hook's stdin, with Claude Code's names.
type input struct {
	SessionID            string    `json:"session_id"`
	TranscriptPath       string    `json:"transcript_path"`
	Cwd                  string    `json:"cwd"`
	PermissionMode       string    `json:"permission_mode,omitempty"`
	HookEventName        EventName `json:"hook_event_name"`
	ToolName             *string   `json:"tool_name,omitempty"`
	ToolInput            any       `json:"tool_input,omitempty"`
	ToolUseID            string    `json:"tool_use_id,omitempty"`
	ToolResponse         any       `json:"tool_response,omitempty"`
	Error                *string   `json:"error,omitempty"`
	IsInterrupt          *bool     `json:"is_interrupt,omitempty"`
	Prompt               *string   `json:"prompt,omitempty"`
	Source               string    `json:"source,omitempty"`
	Model                string    `json:"model,omitempty"`
	Trigger              string    `json:"trigger,omitempty"`
	CustomInstructions   *string   `json:"custom_instructions,omitempty"`
	CompactSummary       *string   `json:"compact_summary,omitempty"`
	StopHookActive       *bool     `json:"stop_hook_active,omitempty"`
	LastAssistantMessage *string   `json:"last_assistant_message,omitempty"`
	Message              *string   `json:"message,omitempty"`
	Title                string    `json:"title,omitempty"`
	NotificationType     string    `json:"notification_type,omitempty"`
	Reason               *string   `json:"reason,omitempty"`
	AgentID              string    `json:"agent_id,omitempty"`
	AgentType            string    `json:"agent_type,omitempty"`
	AgentTranscriptPath  string    `json:"agent_transcript_path,omitempty"`
}

// stdin returns the JSON object a hook receives for e; v is the call as
// the hook sees it (tool events only).
func (e *Event) stdin(v *view) ([]byte, error) {
	in := input{
		SessionID:      e.SessionID,
		TranscriptPath: e.TranscriptPath,
		Cwd:            e.Cwd,
		PermissionMode: e.PermissionMode,
		HookEventName:  e.Name,
		AgentID:        e.AgentID,
		AgentType:      e.AgentType,
	}
	if toolEvent(e.Name) && v != nil {
		name := v.name
		in.ToolName, in.ToolInput, in.ToolUseID = &name, v.input, e.ToolUseID
		switch e.Name {
		case PostToolUse:
			in.ToolResponse = e.response(*v)
		case PostToolUseFailure:
			in.Error, in.IsInterrupt = &e.ToolResult, &e.Interrupted
		}
	}
	switch e.Name {
	case UserPromptSubmit:
		in.Prompt = &e.Prompt
	case SessionStart:
		in.Source, in.Model = e.Source, e.Model
	case PreCompact:
		in.Trigger = e.Trigger
		in.CustomInstructions = &e.CustomInstructions
	case PostCompact:
		in.Trigger = e.Trigger
		in.CompactSummary = &e.CompactSummary
	case Stop:
		in.StopHookActive = &e.StopHookActive
		in.LastAssistantMessage = &e.LastAssistantMessage
	case Notification:
		in.Message, in.Title, in.NotificationType = &e.Message, e.Title, e.NotificationType
	case SessionEnd:
		in.Reason = &e.Reason
	case SubagentStop:
		in.StopHookActive = &e.StopHookActive
		in.LastAssistantMessage = &e.LastAssistantMessage
		in.AgentTranscriptPath = e.AgentTranscriptPath
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
