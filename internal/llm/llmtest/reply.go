package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Reply is what the server answers to one chat-completions request.
//
// The zero Reply streams an empty assistant message. Its JSON form, used by
// scripts, has camelCase keys. ChunkDelay may be written as chunkDelayMs
// (milliseconds, a number), as chunkDelay with a Go duration string
// ("20ms"), or as chunkDelay with a number of nanoseconds, which is what
// encoding/json writes for a time.Duration. Unknown keys are an error, so a
// misspelt failure switch in a script does not pass silently.
type Reply struct {
	// Text is the assistant's answer, streamed as several content deltas.
	Text string `json:"text,omitempty"`
	// Reasoning is streamed as reasoning_content deltas before the text.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are streamed after the text, one after another, with
	// indexes 0, 1, 2, ... An empty ID becomes "call_<n>", n counting up
	// from 1 over the server's life.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Usage is the usage to report. If nil, a plausible usage is computed:
	// a quarter of the request body's bytes as prompt tokens and a quarter
	// of the output's bytes as completion tokens.
	Usage *Usage `json:"usage,omitempty"`
	// FinishReason is the finish_reason to send; the default is
	// "tool_calls" if there are ToolCalls and "stop" otherwise.
	FinishReason string `json:"finishReason,omitempty"`
	// Pieces is how many deltas the text, the reasoning and each call's
	// arguments are split into (fewer when a string is shorter than that);
	// the default is 4. With 1, each string comes whole, as Ollama sends
	// tool calls.
	Pieces int `json:"pieces,omitempty"`

	// Status, if non-zero, makes the server answer with this HTTP status
	// and Body instead of a stream.
	Status int `json:"status,omitempty"`
	// Body is the body sent with Status. The default is an OpenAI-style
	// {"error":{"message":...,"type":...,"code":...}} object. It is sent
	// as application/json if it is valid JSON and as text/plain otherwise.
	Body string `json:"body,omitempty"`
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string `json:"retryAfter,omitempty"`
	// CutMidArguments streams normally but breaks the connection after
	// about half of the first tool call's arguments, with no finish_reason
	// and no [DONE]. Without tool calls the cut comes after about half of
	// the text. A non-streaming answer is cut after half of its body.
	CutMidArguments bool `json:"cutMidArguments,omitempty"`
	// Hang sends the role chunk and the first piece of reasoning or text,
	// then nothing more until the client goes away or the server closes;
	// on Close the connection is broken. A non-streaming request hangs
	// before any byte of the answer.
	Hang bool `json:"hang,omitempty"`
	// ErrorEvent, if set, is sent after the text as `event: error` with
	// data {"error":{"message":ErrorEvent}}, and the stream then ends
	// without tool calls, finish_reason or [DONE]. A non-streaming request
	// gets HTTP 500 with that error instead.
	ErrorEvent string `json:"errorEvent,omitempty"`
	// ChunkDelay is a pause before every chunk but the first. The pause
	// ends early, and the stream is broken off, when the client goes away
	// or the server closes.
	ChunkDelay time.Duration `json:"chunkDelay,omitempty"`

	// SSE, if set, is a complete event-stream body (for example a file of
	// shared/testdata/provider-streams, see ReplayFile) sent verbatim with
	// status 200, flushed event by event. Of the other fields only
	// RetryAfter and ChunkDelay apply to it, and a non-zero Status
	// replaces it.
	SSE string `json:"sse,omitempty"`

	// Gate, if set, holds the answer after its first (role) chunk until
	// the channel is closed: a test decides when the model goes on,
	// instead of guessing how long a step takes on a loaded machine. Go
	// only; a script cannot set it.
	Gate <-chan struct{} `json:"-"`
}

// ToolCall is one tool call of a Reply, or of an assistant message in a
// recorded request. Arguments is raw text and need not be valid JSON.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the token usage a Reply reports. The completion tokens include
// the reasoning tokens, as with OpenAI.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Text returns a Reply that answers with text only.
func Text(text string) Reply { return Reply{Text: text} }

// Call returns a Reply that asks for one tool call, with an automatic ID.
func Call(name, arguments string) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: arguments}}}
}

// UnmarshalJSON reads a Reply from a script. See Reply for the forms of
// ChunkDelay; unknown keys are an error.
func (r *Reply) UnmarshalJSON(data []byte) error {
	type plain Reply
	var v struct {
		plain
		ChunkDelay   json.RawMessage `json:"chunkDelay,omitempty"`
		ChunkDelayMs *float64        `json:"chunkDelayMs,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	*r = Reply(v.plain)
	r.ChunkDelay = 0
	if len(v.ChunkDelay) > 0 && string(v.ChunkDelay) != "null" {
		d, err := parseDelay(v.ChunkDelay)
		if err != nil {
			return fmt.Errorf("reply: chunkDelay: %w", err)
		}
		r.ChunkDelay = d
	}
	if v.ChunkDelayMs != nil {
		r.ChunkDelay = time.Duration(*v.ChunkDelayMs * float64(time.Millisecond))
	}
	return nil
}

// parseDelay reads a duration string ("20ms") or a number of nanoseconds.
func parseDelay(raw json.RawMessage) (time.Duration, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return time.ParseDuration(s)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("want a duration string or nanoseconds, got %s", raw)
	}
	return time.Duration(n), nil
}

// finishReason is the finish_reason r is sent with.
func (r *Reply) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// pieces is how many deltas each string of r is split into.
func (r *Reply) pieces() int {
	if r.Pieces > 0 {
		return r.Pieces
	}
	return 4
}

// usage is the usage r reports for a request body of reqBytes bytes.
func (r *Reply) usage(reqBytes int) Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	out := len(r.Text) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	return Usage{
		PromptTokens:     max(1, reqBytes/4),
		CompletionTokens: max(1, out/4),
		ReasoningTokens:  len(r.Reasoning) / 4,
	}
}
