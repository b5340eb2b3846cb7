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

	// Text is the delta of message.delta, reasoning.delta and tool.output,
	// and the content of message.completed.
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
	// ContextPercent is the share of the model's context window the last
	// request used (usage, turn.completed).
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
	// FinishReason is why the model stopped an answer (message.completed
	// of an assistant message), as the provider said: "stop",
	// "tool_calls", "length" (out of output tokens), "content_filter"
	// (refused)…
	FinishReason string `json:"finishReason,omitempty"`
}

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
