package hooks

import "slices"

// EventName names a point of a session where hooks run. The names and
// their spelling are Claude Code's.
type EventName string

// The events mx-claw runs hooks for.
const (
	// SessionStart runs when a session starts (Source "startup"), is
	// taken up again by a new process ("resume"), or was compacted
	// ("compact").
	SessionStart EventName = "SessionStart"
	// UserPromptSubmit runs when the user sends a message, before the
	// model sees it.
	UserPromptSubmit EventName = "UserPromptSubmit"
	// PreToolUse runs before a tool call, after the model asked for it.
	PreToolUse EventName = "PreToolUse"
	// PermissionRequest runs when a call needs the user's approval, before
	// anyone is asked; a hook may answer in the user's place.
	PermissionRequest EventName = "PermissionRequest"
	// PostToolUse runs after a tool call has run and succeeded.
	PostToolUse EventName = "PostToolUse"
	// PostToolUseFailure runs after a tool call has run and failed.
	PostToolUseFailure EventName = "PostToolUseFailure"
	// Notification runs when mx-claw waits for the user (an approval).
	Notification EventName = "Notification"
	// Stop runs when the model has answered without tool calls and the
	// turn is about to end.
	Stop EventName = "Stop"
	// PreCompact runs before the conversation is compacted.
	PreCompact EventName = "PreCompact"
	// PostCompact runs after the conversation was compacted.
	PostCompact EventName = "PostCompact"
	// SessionEnd runs when a front end is done with a session: the end of
	// `mx-claw run`, leaving the REPL.
	SessionEnd EventName = "SessionEnd"
	// SubagentStart runs when a task call starts a subagent, before its
	// first request (in place of SessionStart); its additionalContext is
	// added to the subagent's instructions. Matchers match the subagent
	// type. It cannot block.
	SubagentStart EventName = "SubagentStart"
	// SubagentStop runs when a subagent has answered without tool calls
	// (in place of Stop); a block keeps it going with the reason as its
	// next instruction. Matchers match the subagent type.
	SubagentStop EventName = "SubagentStop"
)

// Events returns the events mx-claw runs hooks for, in the order a session
// meets them.
func Events() []EventName {
	return []EventName{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
		PostToolUseFailure, Notification, Stop, PreCompact, PostCompact, SessionEnd, SubagentStart, SubagentStop}
}

// valid reports whether n is one of Events.
func (n EventName) valid() bool { return slices.Contains(Events(), n) }

// claudeOnlyEvents are Claude Code hook events for moments mx-claw does not
// have (subagents, teams, worktrees, MCP elicitation, …). A settings file
// that configures them loads; their hooks never run, which the user is
// told once.
var claudeOnlyEvents = []string{
	"Setup", "InstructionsLoaded", "TaskCreated",
	"TaskCompleted", "StopFailure", "TeammateIdle", "ConfigChange", "WorktreeCreate",
	"WorktreeRemove", "CwdChanged", "FileChanged", "Elicitation", "ElicitationResult",
	"PermissionDenied", "UserPromptExpansion",
}

// claudeOnlyEvent reports whether name is a Claude Code hook event that
// mx-claw does not have.
func claudeOnlyEvent(name string) bool { return slices.Contains(claudeOnlyEvents, name) }

// toolEvent reports whether ev is about one tool call: its matcher matches
// the tool name and its input carries tool_name and tool_input.
func toolEvent(ev EventName) bool {
	switch ev {
	case PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure:
		return true
	}
	return false
}
