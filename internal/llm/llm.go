// Package llm is the provider-neutral model interface: the request the agent
// sends, the deltas it watches while a response streams, and the complete
// response it stores.
//
// It imports no other mx-claw package (not even protocol), so adapters and
// test servers can be reused on their own. Adapters live in subpackages
// (openai); the fake server used by tests lives in llmtest.
package llm

import (
	"context"
	"encoding/json"
)

// Message is one chat message of a request, in the OpenAI chat shape.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Images are pictures sent with the message, for models that read
	// them: a user message carries them as image content parts; a tool
	// result's go in a user message after the results (chat completions
	// take images only from users).
	Images []Image `json:"-"`
}

// Image is one picture of a message: its media type and the encoded file
// in standard base64.
type Image struct {
	MIME string
	Data string
}

// ToolCall is one complete tool call of a response. Arguments is the raw
// text the model produced, which need not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// TooLarge is the size in bytes of arguments that went past
	// Request.MaxArgumentBytes: they were dropped as they arrived, and
	// Arguments is empty. It is 0 when Arguments is whole.
	TooLarge int64 `json:"-"`
}

// Tool describes one tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model request.
type Request struct {
	// Model is the provider's model name (without the "provider/" prefix).
	Model    string
	Messages []Message
	Tools    []Tool
	// MaxTokens caps the response; 0 leaves it to the provider.
	MaxTokens int
	// MaxAnswerBytes caps the text and reasoning of the response
	// together; 0 means no cap. A response that goes past it is
	// abandoned at once (the client stops reading) with a
	// *TooLargeError, so a runaway answer never fills memory.
	MaxAnswerBytes int
	// MaxArgumentBytes caps the arguments of one tool call; 0 means no
	// cap. The arguments of a call that go past it are dropped as they
	// arrive and the call comes back with ToolCall.TooLarge set, so the
	// caller can tell the model; the response is read on, up to
	// MaxDroppedBytes of dropped arguments, past which it is abandoned
	// with a *TooLargeError.
	MaxArgumentBytes int
}

// MaxDroppedBytes is how many bytes of too large tool-call arguments a
// client reads and drops before it abandons the response (see
// Request.MaxArgumentBytes).
const MaxDroppedBytes = 64 << 20

// Usage is the token usage a provider reports for one request.
type Usage struct {
	InputTokens     int64
	OutputTokens    int64
	CachedTokens    int64
	ReasoningTokens int64
}

// Response is a complete model response, assembled from its stream.
type Response struct {
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	// Usage is the usage reported by the provider; HasUsage says whether it
	// reported any.
	Usage    Usage
	HasUsage bool
	// FinishReason is the provider's finish_reason ("stop", "tool_calls",
	// "length", ...), or "" if the stream ended without one.
	FinishReason string
	// Model is the model name the provider reported, if any.
	Model string
}

// DeltaKind says what a Delta carries.
type DeltaKind int

// The kinds of Delta.
const (
	// DeltaText is a piece of the assistant's answer.
	DeltaText DeltaKind = iota + 1
	// DeltaReasoning is a piece of the model's visible reasoning.
	DeltaReasoning
	// DeltaRetry says a request failed before any response byte was
	// consumed and will be sent again after Delay.
	DeltaRetry
)

// Delta is something a client reports while a request is in flight.
type Delta struct {
	Kind DeltaKind
	Text string
	// Attempt (from 1) and Err describe the failed attempt of a DeltaRetry;
	// Delay is the wait before the next one.
	Attempt int
	Err     error
	Delay   int64 // nanoseconds
}

// Client sends requests to one provider.
type Client interface {
	// Stream sends req and returns the assembled response. While the
	// response streams it calls onDelta, from the calling goroutine, for
	// each text or reasoning piece and each retry. onDelta may be nil.
	//
	// A stream that breaks or reports an error after the response started
	// is an error; the partial response is discarded. Cancelling ctx stops
	// the request at once and returns ctx's error.
	Stream(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// Warmer is a Client that can get ready for a request that is about to
// come, such as by connecting to the server while the agent still stores
// the user's message. Warm returns at once; it never fails.
type Warmer interface {
	Warm()
}
