package catalog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/testutil"
)

// streamsDir finds the recorded provider streams or skips the test.
func streamsDir(t testing.TB) string { return testutil.StreamsDir(t) }

// recording is what a recorded stream says: the text of each choice, the
// tool calls of choice 0 and the final usage, mapped to protocol.Usage the
// way the chat-completions decoder maps it.
type recording struct {
	model     string
	content   map[int]string
	reasoning string
	toolCalls []protocol.ToolCall
	usage     protocol.Usage
	// promptTokens and completionTokens are the raw usage fields.
	promptTokens, completionTokens, reasoningTokens int64
}

type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int `json:"index"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
		PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
	} `json:"usage"`
}

// readRecording parses one recorded SSE stream.
func readRecording(t *testing.T, name string) recording {
	t.Helper()
	f, err := os.Open(filepath.Join(streamsDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := recording{content: map[int]string{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Model != "" {
			rec.model = c.Model
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				rec.content[ch.Index] += *ch.Delta.Content
			}
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.ReasoningContent != nil {
				rec.reasoning += *ch.Delta.ReasoningContent
			}
			for _, tc := range ch.Delta.ToolCalls {
				for len(rec.toolCalls) <= tc.Index {
					rec.toolCalls = append(rec.toolCalls, protocol.ToolCall{})
				}
				rec.toolCalls[tc.Index].Name += tc.Function.Name
				rec.toolCalls[tc.Index].Arguments += tc.Function.Arguments
			}
		}
		if u := c.Usage; u != nil {
			rec.promptTokens, rec.completionTokens = u.PromptTokens, u.CompletionTokens
			rec.reasoningTokens = u.CompletionTokensDetails.ReasoningTokens
			rec.usage = protocol.Usage{
				InputTokens:     u.PromptTokens,
				OutputTokens:    u.CompletionTokens,
				CachedTokens:    u.PromptTokensDetails.CachedTokens,
				ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
			}
			if rec.usage.CachedTokens == 0 {
				rec.usage.CachedTokens = u.PromptCacheHitTokens
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rec
}
