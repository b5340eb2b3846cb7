package protocol

import (
	"encoding/json"
	"time"
)

// EventType names the shape of an event. A name is never reused for another
// shape.
type EventType string

// The event types of DESIGN §4.
const (
	EventSessionCreated      EventType = "session.created"
	EventSessionUpdated      EventType = "session.updated"
	EventTurnStarted         EventType = "turn.started"
	EventMessageDelta        EventType = "message.delta"
	EventMessageCompleted    EventType = "message.completed"
	EventReasoningDelta      EventType = "reasoning.delta"
	EventToolStarted         EventType = "tool.started"
	EventToolOutput          EventType = "tool.output"
	EventToolCompleted       EventType = "tool.completed"
	EventPermissionRequested EventType = "permission.requested"
	EventPermissionResolved  EventType = "permission.resolved"
	EventUsage               EventType = "usage"
	EventCompaction          EventType = "compaction"
	EventInputQueued         EventType = "input.queued"
	EventTurnCompleted       EventType = "turn.completed"
	EventTurnFailed          EventType = "turn.failed"
	EventTurnCancelled       EventType = "turn.cancelled"
	// EventTurnPaused ends a turn that waits for an approval (RequestID);
	// it continues when someone answers.
	EventTurnPaused EventType = "turn.paused"
	// EventTodoUpdated carries the model's task list (Todos) after a
	// todo_write call.
	EventTodoUpdated EventType = "todo.updated"
	// EventWarning tells the user (Text) something they should know that
	// changes nothing: a context file cut to fit, a budget nearly spent.
	EventWarning EventType = "warning"
	// EventHookWarning tells the user (Text) that a hook failed, timed out
	// or said something that changes nothing.
	EventHookWarning EventType = "hook.warning"
	EventRetry       EventType = "provider.retry"
	// EventContextFrozen records what a new session's system prompt was
	// frozen with (Context): its memory files and its skills.
	EventContextFrozen EventType = "context.frozen"
	// EventMemoryCandidate reports a request to remember found in the
	// user's message (Candidate), kept for a person to accept or reject.
	EventMemoryCandidate EventType = "memory.candidate"
	// EventSkillProposed reports a skill the model proposed from a
	// finished turn (Proposal), kept for a person to accept or reject. It
	// comes after the turn's turn.completed.
	EventSkillProposed EventType = "skill.proposed"
	// EventInputReturned gives back queued messages (Queued) that will not
	// be sent: the turn they waited for was cancelled or failed, or they
	// were left from a process that ended before sending them. A front end
	// puts their text back where the user can edit and send it again.
	EventInputReturned EventType = "input.returned"
	// EventInputEdited says a queued message (Queued[0]) was changed.
	EventInputEdited EventType = "input.edited"
	// EventInputRemoved says a queued message (Queued[0]) was taken out of
	// the queue by the user.
	EventInputRemoved EventType = "input.removed"
)

// Event is one thing that happened in a session. Sequence strictly increases
// per session, so a client can replay from any point.
//
// The payload fields are flat and optional; which ones are set depends on
// Type. Deltas (message.delta, reasoning.delta, tool.output) are sent to live
// clients but not stored: the complete message or result that follows them
// is. Their Sequence is 0.
type Event struct {
	Type      EventType `json:"type"`
	SessionID string    `json:"sessionId"`
	TurnID    string    `json:"turnId,omitempty"`
	Sequence  int64     `json:"sequence"`
	Timestamp time.Time `json:"timestamp"`
	// ParentSessionID is set on every event of a subagent's session: the
	// session whose task call started it. ParentToolCallID is that call.
	// A front end shows such events nested under the call's card, or not
	// at all; they are never the parent's own progress.
	ParentSessionID  string `json:"parentSessionId,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`

	// Text is the delta of message.delta, reasoning.delta and tool.output,
	// the content of message.completed, and what had streamed of the
	// answer a turn.cancelled cut short (at most 32 KiB).
	Text string `json:"text,omitempty"`
	// Message is the stored message of message.completed (assistant) and
	// tool.completed (tool result).
	Message *Message `json:"message,omitempty"`

	// Tool call fields: tool.started, tool.output, tool.completed,
	// permission.*.
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Summary    string          `json:"summary,omitempty"`
	OK         *bool           `json:"ok,omitempty"`
	Preview    string          `json:"preview,omitempty"`
	DurationMS int64           `json:"durationMs,omitempty"`

	// Status is the new status of session.updated.
	Status SessionStatus `json:"status,omitempty"`
	// Error is the reason of turn.failed and the error of provider.retry.
	Error string `json:"error,omitempty"`
	// Code classifies the error of turn.failed for front ends that act on
	// it (ErrorCode values); empty for other failures.
	Code ErrorCode `json:"code,omitempty"`
	// Usage is the usage of one request (usage) or of the turn
	// (turn.completed).
	Usage *Usage `json:"usage,omitempty"`
	// Step is the loop iteration, from 1, of events that belong to one.
	Step int `json:"step,omitempty"`
	// Attempt and DelayMS describe a provider.retry.
	Attempt int   `json:"attempt,omitempty"`
	DelayMS int64 `json:"delayMs,omitempty"`
	// Model is the model of turn.started and session.created.
	Model string `json:"model,omitempty"`
	// Session is the session record of session.created.
	Session *Session `json:"session,omitempty"`
	// RequestID identifies an approval (permission.*).
	RequestID string `json:"requestId,omitempty"`
	// AnsweredBy names who answered an approval (permission.resolved)
	// when it was not the front end of the process that asked: "the web
	// panel", "mx-claw approve", "another process".
	AnsweredBy string `json:"answeredBy,omitempty"`
	// ContextPercent is the share of the model's context window the last
	// request used (usage, turn.completed), or the next one is estimated
	// to use (compaction).
	ContextPercent float64 `json:"contextPercent,omitempty"`
	// CostUSD is the estimated cost of the request (usage) or the turn
	// (turn.completed); absent when the model's price is unknown.
	CostUSD *float64 `json:"costUsd,omitempty"`
	// Telemetry of turn.completed: time to the first token of the first
	// answer, and the time spent waiting for the model and running tools.
	FirstTokenMS int64 `json:"firstTokenMs,omitempty"`
	ModelMS      int64 `json:"modelMs,omitempty"`
	ToolMS       int64 `json:"toolMs,omitempty"`
	// Compaction is the record of a compaction event.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Todos is the task list of todo.updated.
	Todos []Todo `json:"todos,omitempty"`
	// Changes are the workspace files a tool call changed (tool.completed),
	// as its checkpoints saw them.
	Changes []FileChange `json:"changes,omitempty"`
	// Restore reports an undo or rewind (checkpoint.restored,
	// conversation.rewound).
	Restore *Restore `json:"restore,omitempty"`
	// Queued are the queued messages of input.queued, input.edited,
	// input.removed and input.returned.
	Queued []QueuedInput `json:"queued,omitempty"`
	// FinishReason is why the model stopped an answer (message.completed
	// of an assistant message), as the provider said: "stop",
	// "tool_calls", "length" (out of output tokens), "content_filter"
	// (refused)…
	FinishReason string `json:"finishReason,omitempty"`
	// Context is the payload of context.frozen.
	Context *FrozenContext `json:"context,omitempty"`
	// Candidate is the payload of memory.candidate.
	Candidate *MemoryCandidate `json:"candidate,omitempty"`
	// Proposal is the payload of skill.proposed.
	Proposal *SkillProposal `json:"proposal,omitempty"`
}

// ErrorCode classifies why a turn did not end well, where a front end
// offers something for it (continue, fix a file).
type ErrorCode string

// The error codes of turn.failed.
const (
	// CodeMaxIterations: the turn used its model steps (maxIterations);
	// it can be continued.
	CodeMaxIterations ErrorCode = "max_iterations"
	// CodeBudget: a token, cost or time budget was spent.
	CodeBudget ErrorCode = "budget"
	// CodeLoop: the model kept making the same call.
	CodeLoop ErrorCode = "loop"
	// CodeConfig: the configuration or a settings file is wrong; the
	// error names the file.
	CodeConfig ErrorCode = "config"
	// CodeStall: the provider went silent in the middle of an answer.
	CodeStall ErrorCode = "stall"
)

// Stored reports whether events of type t are kept in the store. Deltas are
// not: the complete value that follows them is.
func (t EventType) Stored() bool {
	switch t {
	case EventMessageDelta, EventReasoningDelta, EventToolOutput:
		return false
	}
	return true
}

// Terminal reports whether an event of type t ends a turn.
func (t EventType) Terminal() bool {
	switch t {
	case EventTurnCompleted, EventTurnFailed, EventTurnCancelled, EventTurnPaused:
		return true
	}
	return false
}
