package protocol

import "encoding/json"

// Role is the author of a message, in the OpenAI chat shape.
type Role string

// The roles a message may have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a session's transcript. Messages are stored
// append-only; the request sent to a model is a projection of them.
type Message struct {
	// Seq is the message's position in its session, from 1. It is assigned
	// by the store.
	Seq  int64 `json:"seq,omitempty"`
	Role Role  `json:"role"`
	// Content is the text of the message. For a tool message it is the
	// result the model reads.
	Content string `json:"content"`
	// Reasoning is the model's visible reasoning text, if the provider sent
	// any. It is kept for the user and never sent back to the model.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName is the name of the tool a tool message answers, for display.
	ToolName string `json:"name,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"isError,omitempty"`
	// TurnID is the turn that produced the message.
	TurnID string `json:"turnId,omitempty"`
	// Usage is the token usage reported for the request that produced an
	// assistant message.
	Usage *Usage `json:"usage,omitempty"`
	// Model is the exact model ("provider/model") that produced an
	// assistant message.
	Model string `json:"model,omitempty"`
	// Images are pictures a user message or a tool result carries, for
	// models that read images.
	Images []Image `json:"images,omitempty"`
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the raw JSON text the model produced. It may be invalid;
	// the agent validates it before anything runs.
	Arguments string `json:"arguments"`
}

// Usage counts the tokens of one or more model requests.
type Usage struct {
	InputTokens     int64 `json:"inputTokens"`
	OutputTokens    int64 `json:"outputTokens"`
	CachedTokens    int64 `json:"cachedTokens,omitempty"`
	ReasoningTokens int64 `json:"reasoningTokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedTokens += o.CachedTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// RawJSON returns s as a json.RawMessage if it is valid JSON, else nil.
func RawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return nil
}
