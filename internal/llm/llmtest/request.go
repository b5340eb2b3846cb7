package llmtest

import (
	"net/http"
	"time"
)

// Request is one request the server received, as recorded.
//
// Recorded requests are shared between callers of Server.Requests;
// treat them as read-only.
type Request struct {
	Method string
	// Path is the URL path, such as "/v1/chat/completions".
	Path string
	// Header is a copy of the request header.
	Header http.Header
	// Body is the request body, or nil when the server does not record
	// bodies (see Server.RecordBodies). Size is its length either way.
	Body []byte
	Size int
	// Time is when the request arrived.
	Time time.Time
	// ConnAccepted is when the server accepted the connection the request
	// came on (zero for a server that does not listen itself).
	ConnAccepted time.Time
	// Chat is the parsed body of a chat-completions request, or nil for
	// other requests and for bodies that are not valid JSON. When bodies
	// are not recorded, the recorded Chat has no Messages.
	Chat *ChatRequest
}

// ChatRequest is the part of a chat-completions request body that tests
// look at.
type ChatRequest struct {
	Model  string
	Stream bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// MaxTokens and MaxCompletionTokens are max_tokens and
	// max_completion_tokens, 0 when absent.
	MaxTokens           int
	MaxCompletionTokens int
	Messages            []ChatMessage
	// NumMessages is len(Messages), kept when Messages is not.
	NumMessages int
	// Tools are the names of the functions offered, in order.
	Tools []string
}

// ChatMessage is one message of a ChatRequest.
type ChatMessage struct {
	Role string
	// Content is the message text. A null content is "", an array of
	// content parts is the concatenation of their "text" strings, and any
	// other value is its raw JSON.
	Content string
	// Reasoning is reasoning_content, which a client may send back.
	Reasoning string
	Name      string
	// ToolCalls are the calls of an assistant message, flattened from
	// {id, function: {name, arguments}}. Arguments that are not a JSON
	// string are kept as raw JSON.
	ToolCalls  []ToolCall
	ToolCallID string
}
