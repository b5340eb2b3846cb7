package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// chunk is the part of a chat.completion.chunk the client reads. Fields
// that may be null or absent are plain strings (null leaves them empty) or
// pointers, so a chunk decodes with few allocations.
type chunk struct {
	Model   modelName       `json:"model"`
	Choices []chunkChoice   `json:"choices"`
	Usage   *chunkUsage     `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type chunkDelta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []chunkToolCall `json:"tool_calls"`
}

type chunkToolCall struct {
	Index    optIndex `json:"index"`
	ID       string   `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chunkUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

// optIndex is a tool call's index plus one, so that its zero value means
// the provider sent none (or null). It decodes without allocating, unlike
// *int.
type optIndex int

// get returns the index, or -1 if there was none.
func (x optIndex) get() int { return int(x) - 1 }

// UnmarshalJSON implements json.Unmarshaler.
func (x *optIndex) UnmarshalJSON(b []byte) error {
	n, ok := 0, len(b) > 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1<<20 {
			ok = false
			break
		}
		n = n*10 + int(c-'0')
	}
	if !ok {
		if string(b) != "null" {
			return fmt.Errorf("tool call index %s is not a small non-negative integer", b)
		}
		n = -1
	}
	*x = optIndex(n + 1)
	return nil
}

// modelName keeps the first model name it decodes and skips later ones:
// every chunk repeats the name, and decoding it again would allocate a
// string per chunk.
type modelName string

// UnmarshalJSON implements json.Unmarshaler.
func (m *modelName) UnmarshalJSON(b []byte) error {
	if *m != "" || len(b) < 2 || b[0] != '"' {
		return nil
	}
	if bytes.IndexByte(b, '\\') < 0 {
		*m = modelName(b[1 : len(b)-1])
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*m = modelName(s)
	return nil
}

// reset empties c for the next chunk, keeping the memory of its slices and
// the model name. Every other field must be cleared: encoding/json leaves
// absent fields as they were, and decodes array elements into the old
// ones.
func (c *chunk) reset() {
	choices := c.Choices[:cap(c.Choices)]
	for i := range choices {
		calls := choices[i].Delta.ToolCalls[:cap(choices[i].Delta.ToolCalls)]
		clear(calls)
		choices[i] = chunkChoice{Delta: chunkDelta{ToolCalls: calls[:0]}}
	}
	*c = chunk{Model: c.Model, Choices: choices[:0]}
}

// chunkDecoder decodes one chunk at a time with a single json.Decoder, which
// keeps its scanner and decode state between chunks; json.Unmarshal would
// allocate them anew for each one.
type chunkDecoder struct {
	feed feeder
	dec  *json.Decoder
	fed  int64
}

func (cd *chunkDecoder) decode(data []byte, c *chunk) error {
	if cd.dec == nil {
		cd.dec = json.NewDecoder(&cd.feed)
	}
	cd.feed.data = data
	cd.fed += int64(len(data))
	if err := cd.dec.Decode(c); err != nil {
		return err
	}
	// data is trimmed, so the value must have used all of it; more would
	// be mixed into the next chunk.
	if cd.dec.InputOffset() != cd.fed {
		return errors.New("data after the JSON value")
	}
	return nil
}

// feeder hands the json.Decoder the current chunk, then io.EOF.
type feeder struct{ data []byte }

func (f *feeder) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// decoder turns the events of one stream into a response. A Client keeps
// decoders in a pool, so that their buffers serve many streams; reset
// readies one for the next stream.
type decoder struct {
	onDelta   func(llm.Delta)
	rd        *sse.Reader
	c         chunk
	cd        chunkDecoder
	text      strings.Builder
	reasoning strings.Builder
	calls     llm.ToolCallAccumulator
	resp      llm.Response
	done      bool // [DONE] seen
	events    int
	// maxAnswer caps the text and reasoning together (0: no cap).
	maxAnswer int
}

// limit sets the caps of the request whose response d decodes next
// (llm.Request.MaxAnswerBytes and MaxArgumentBytes).
func (d *decoder) limit(req *llm.Request) {
	d.maxAnswer = req.MaxAnswerBytes
	d.calls.MaxArgs = req.MaxArgumentBytes
}

// reset readies d to decode body, or, with a nil body, drops its
// references to the last stream.
func (d *decoder) reset(body io.Reader, onDelta func(llm.Delta)) {
	if d.rd == nil {
		d.rd = sse.NewReader(body)
	} else {
		d.rd.Reset(body)
	}
	d.onDelta = onDelta
	d.c.reset()
	d.c.Model = ""
	d.text.Reset()
	d.reasoning.Reset()
	d.calls.Reset()
	d.resp = llm.Response{}
	d.done = false
	d.events = 0
	d.maxAnswer = 0
	d.calls.MaxArgs = 0
}

// run decodes the stream. It returns ctx's error if ctx ends first.
func (d *decoder) run(ctx context.Context) (*llm.Response, error) {
	for !d.done {
		ev, err := d.rd.NextRaw()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return d.finish(err)
		}
		if err := d.event(ev); err != nil {
			return nil, err
		}
	}
	return d.finish(nil)
}

// errChunk wraps the chunk decoding errors of a StreamError.
var errChunk = errors.New("invalid stream chunk")

// event handles one SSE event.
func (d *decoder) event(ev sse.RawEvent) error {
	switch string(ev.Event) {
	case "", "message":
	case "error":
		return errorEvent(ev.Data)
	default:
		return nil
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return nil
	}
	if string(data) == "[DONE]" {
		d.done = true
		return nil
	}
	d.events++
	c := &d.c
	c.reset()
	if err := d.cd.decode(data, c); err != nil {
		return &llm.StreamError{Err: fmt.Errorf("%w: %w: %s", errChunk, err, snippet(data))}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return errorEvent(data)
	}
	if u := c.Usage; u != nil {
		d.resp.HasUsage = true
		d.resp.Usage = llm.Usage{
			InputTokens:     u.PromptTokens,
			OutputTokens:    u.CompletionTokens,
			CachedTokens:    u.PromptTokensDetails.CachedTokens,
			ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		}
		if d.resp.Usage.CachedTokens == 0 {
			d.resp.Usage.CachedTokens = u.PromptCacheHitTokens
		}
	}
	for i := range c.Choices {
		if ch := &c.Choices[i]; ch.Index == 0 {
			if err := d.choice(ch); err != nil {
				return err
			}
		}
	}
	return nil
}

// choice handles the delta of choice 0. It fails with a *llm.TooLargeError
// when the answer or the dropped arguments go past their caps; the piece
// that would pass the cap is neither kept nor reported.
func (d *decoder) choice(ch *chunkChoice) error {
	dl := &ch.Delta
	r := cmpOr(dl.ReasoningContent, dl.Reasoning)
	if d.maxAnswer > 0 && d.text.Len()+d.reasoning.Len()+len(r)+len(dl.Content) > d.maxAnswer {
		return &llm.TooLargeError{What: "answer", Limit: int64(d.maxAnswer)}
	}
	if r != "" {
		d.reasoning.WriteString(r)
		d.emit(llm.DeltaReasoning, r)
	}
	if dl.Content != "" {
		d.text.WriteString(dl.Content)
		d.emit(llm.DeltaText, dl.Content)
	}
	for i := range dl.ToolCalls {
		tc := &dl.ToolCalls[i]
		d.calls.Add(tc.Index.get(), tc.ID, tc.Function.Name, tc.Function.Arguments)
	}
	if d.calls.Dropped() > llm.MaxDroppedBytes {
		return &llm.TooLargeError{What: "tool-call arguments", Limit: llm.MaxDroppedBytes}
	}
	if ch.FinishReason != "" {
		d.resp.FinishReason = ch.FinishReason
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (d *decoder) emit(kind llm.DeltaKind, s string) {
	if d.onDelta != nil {
		d.onDelta(llm.Delta{Kind: kind, Text: s})
	}
}

// finish checks how the stream ended and returns the response. readErr is
// the error that ended reading: nil after [DONE], io.EOF, or a failure.
func (d *decoder) finish(readErr error) (*llm.Response, error) {
	if !d.done && d.resp.FinishReason == "" {
		what := "no finish_reason and no [DONE]"
		if d.events == 0 {
			what = "no data"
		}
		if readErr != nil && readErr != io.EOF {
			return nil, &llm.StreamError{Err: fmt.Errorf("%w (%s): read: %w", llm.ErrIncompleteStream, what, readErr)}
		}
		return nil, &llm.StreamError{Err: fmt.Errorf("%w (%s)", llm.ErrIncompleteStream, what)}
	}
	// A read error after choice 0 finished cost at most the usage; the
	// answer itself is whole.
	d.resp.Model = string(d.c.Model)
	d.resp.Text = d.text.String()
	d.resp.Reasoning = d.reasoning.String()
	d.resp.ToolCalls = d.calls.Calls()
	resp := d.resp // d is reused; the response must not be
	return &resp, nil
}

// errorEvent turns an error event's or error chunk's data into a
// StreamError.
func errorEvent(data []byte) error {
	p, ok := llm.ParseErrorPayload(data)
	if !ok {
		return &llm.StreamError{Message: string(snippet(data))}
	}
	return &llm.StreamError{Type: p.Type, Code: p.Code, Message: p.Message, Status: p.Status}
}

// snippet returns the start of a payload for an error message.
func snippet(data []byte) []byte {
	const n = 200
	if len(data) <= n {
		return data
	}
	return append(data[:n:n], "..."...)
}
