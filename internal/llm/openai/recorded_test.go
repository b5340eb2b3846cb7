package openai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/testutil"
)

// streamsDir finds the recorded provider streams or skips the test.
func streamsDir(t testing.TB) string { return testutil.StreamsDir(t) }

// text is an expected string: whole, or for long ones its start, length
// and SHA-256.
type text struct {
	exact  string
	prefix string
	len    int
	sha256 string
}

func (w text) check(t *testing.T, what, got string) {
	t.Helper()
	if w.sha256 == "" {
		if got != w.exact {
			t.Errorf("%s = %q, want %q", what, got, w.exact)
		}
		return
	}
	sum := sha256.Sum256([]byte(got))
	if !strings.HasPrefix(got, w.prefix) || len(got) != w.len || hex.EncodeToString(sum[:]) != w.sha256 {
		t.Errorf("%s = %q (%d bytes), want %d bytes starting %q with sha256 %s", what, got, len(got), w.len, w.prefix, w.sha256)
	}
}

type recorded struct {
	text, reasoning text
	// textDeltas and reasoningDeltas count the onDelta calls.
	textDeltas, reasoningDeltas int
	calls                       []llm.ToolCall
	usage                       llm.Usage
	finish, model               string
	// err, when set, checks the error the stream must end with.
	err func(t *testing.T, err error)
}

// The expected values below were read from the files with a separate
// script (jq and Python), not computed by this package.
var recordedStreams = map[string]recorded{
	"openai-chat-text.sse": {
		text:       text{exact: "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app."},
		textDeltas: 30,
		usage:      llm.Usage{InputTokens: 14, OutputTokens: 30},
		finish:     "stop",
		model:      "gpt-4o-2024-08-06",
	},
	"openai-chat-tool-call-split-args.sse": {
		calls:  []llm.ToolCall{{ID: "call_c91SqDXlYFuETYv8mUHzz6pp", Name: "GetWeatherArgs", Arguments: `{"city":"Edinburgh","country":"UK","units":"c"}`}},
		usage:  llm.Usage{InputTokens: 76, OutputTokens: 24},
		finish: "tool_calls",
		model:  "gpt-4o-2024-08-06",
	},
	"openai-chat-parallel-tool-calls.sse": {
		calls: []llm.ToolCall{
			{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
			{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`},
		},
		usage:  llm.Usage{InputTokens: 149, OutputTokens: 60},
		finish: "tool_calls",
		model:  "gpt-4o-2024-08-06",
	},
	// Choices 1 and 2 say 61 and 59 degrees; only choice 0 counts.
	"openai-chat-multiple-choices.sse": {
		text:       text{exact: `{"city":"San Francisco","temperature":65,"units":"f"}`},
		textDeltas: 14,
		usage:      llm.Usage{InputTokens: 79, OutputTokens: 42},
		finish:     "stop",
		model:      "gpt-4o-2024-08-06",
	},
	"openai-chat-error-400.json": {
		err: func(t *testing.T, err error) {
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %T %v, want *llm.APIError", err, err)
			}
			const msg = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
			if apiErr.Status != 400 || apiErr.Type != "invalid_request_error" || apiErr.Code != "unsupported_parameter" || apiErr.Message != msg || apiErr.Retryable {
				t.Errorf("APIError = %+v", apiErr)
			}
			if got, want := err.Error(), "provider returned 400 Bad Request: "+msg; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
			if len(apiErr.Body) != 246 {
				t.Errorf("len(Body) = %d, want the whole 246-byte body", len(apiErr.Body))
			}
		},
	},
	"deepseek-reasoner-reasoning-content.sse": {
		text: text{exact: `The word "strawberry" contains three "r"s.`},
		reasoning: text{
			prefix: `We need to count the number of the letter "r" in the word "strawberry".`,
			len:    606,
			sha256: "01a5d04ca7e849fd2fade232d01ab33b2f93c8b2cd8c4bfaa2acc0f6d86f83f5",
		},
		textDeltas:      13,
		reasoningDeltas: 205,
		usage:           llm.Usage{InputTokens: 18, OutputTokens: 219, CachedTokens: 0, ReasoningTokens: 205},
		finish:          "stop",
		model:           "deepseek-reasoner",
	},
	"deepseek-reasoner-tool-call.sse": {
		reasoning:       text{exact: `The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".`},
		reasoningDeltas: 39,
		calls:           []llm.ToolCall{{ID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
		usage:           llm.Usage{InputTokens: 339, OutputTokens: 83, CachedTokens: 320, ReasoningTokens: 39},
		finish:          "tool_calls",
		model:           "deepseek-reasoner",
	},
	"deepseek-chat-parallel-tool-calls.sse": {
		calls: []llm.ToolCall{
			{ID: "call_0_4a3f5bbb-26bd-4ebe-bff5-fe84963cab4a", Name: "getCurrentWeather", Arguments: `{"location": "Boston, MA", "unit": "fahrenheit"}`},
			{ID: "call_1_796d64dc-65c8-4a8e-a389-f8678a6865b6", Name: "getCurrentTime", Arguments: `{"location": "Boston, MA"}`},
		},
		usage:  llm.Usage{InputTokens: 264, OutputTokens: 50, CachedTokens: 256},
		finish: "tool_calls",
		model:  "deepseek-chat",
	},
	// 93 reasoning deltas, then an error event and no [DONE].
	"groq-error-mid-stream.sse": {
		reasoning: text{
			prefix: "We need to call the tool with invalid parameters first",
			len:    412,
			sha256: "42abcfd444c13a252daf3a905d1959fe1881cf8631c56e434cf9dd844576524f",
		},
		reasoningDeltas: 93,
		err: func(t *testing.T, err error) {
			var se *llm.StreamError
			if !errors.As(err, &se) {
				t.Fatalf("err = %T %v, want *llm.StreamError", err, err)
			}
			const msg = "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed]"
			if se.Code != "tool_use_failed" || se.Type != "invalid_request_error" || se.Status != 400 || se.Message != msg {
				t.Errorf("StreamError = %+v", se)
			}
			if !strings.Contains(err.Error(), "tool_use_failed") || !strings.Contains(err.Error(), msg) {
				t.Errorf("Error() = %q lacks the code or message", err)
			}
		},
	},
}

func TestRecordedStreams(t *testing.T) {
	t.Parallel()
	dir := streamsDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		files = append(files, e.Name())
		if _, ok := recordedStreams[e.Name()]; !ok {
			t.Errorf("%s has no expectations in recordedStreams", e.Name())
		}
	}
	for name := range recordedStreams {
		if !slices.Contains(files, name) {
			t.Errorf("recordedStreams names %s, which is not in %s", name, dir)
		}
	}
	for _, name := range files {
		want, ok := recordedStreams[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if strings.HasSuffix(name, ".json") {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
				} else {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = w.Write(body)
			}))
			defer srv.Close()

			c := New(Config{BaseURL: srv.URL + "/v1", Sleep: noSleep})
			var textBuf, reasoningBuf strings.Builder
			var textDeltas, reasoningDeltas int
			resp, err := c.Stream(context.Background(), testRequest(), func(d llm.Delta) {
				switch d.Kind {
				case llm.DeltaText:
					textDeltas++
					textBuf.WriteString(d.Text)
				case llm.DeltaReasoning:
					reasoningDeltas++
					reasoningBuf.WriteString(d.Text)
				case llm.DeltaRetry:
					t.Errorf("unexpected retry: %v", d.Err)
				}
			})
			if n := hits.Load(); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
			if textDeltas != want.textDeltas || reasoningDeltas != want.reasoningDeltas {
				t.Errorf("deltas: %d text, %d reasoning; want %d, %d", textDeltas, reasoningDeltas, want.textDeltas, want.reasoningDeltas)
			}
			want.reasoning.check(t, "streamed reasoning", reasoningBuf.String())
			want.text.check(t, "streamed text", textBuf.String())
			if want.err != nil {
				if resp != nil {
					t.Errorf("got a response with the error: %+v", resp)
				}
				want.err(t, err)
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			want.text.check(t, "Text", resp.Text)
			want.reasoning.check(t, "Reasoning", resp.Reasoning)
			if !slices.Equal(resp.ToolCalls, want.calls) {
				t.Errorf("ToolCalls = %+v\nwant %+v", resp.ToolCalls, want.calls)
			}
			if !resp.HasUsage || resp.Usage != want.usage {
				t.Errorf("Usage = %+v (HasUsage %v), want %+v", resp.Usage, resp.HasUsage, want.usage)
			}
			if resp.FinishReason != want.finish || resp.Model != want.model {
				t.Errorf("FinishReason, Model = %q, %q; want %q, %q", resp.FinishReason, resp.Model, want.finish, want.model)
			}
		})
	}
}
