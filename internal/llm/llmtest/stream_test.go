package llmtest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStreamShape(t *testing.T) {
	t.Parallel()
	readArgs := `{"path":"internal/llm/llmtest/server.go","limit":200}`
	tests := []struct {
		name         string
		reply        Reply
		includeUsage bool
		wantCalls    []ToolCall // IDs "" mean "any call_<n>"
		wantFinish   string
		wantUsage    *Usage // checked when includeUsage
	}{
		{
			name:         "text",
			reply:        Text("The quick brown fox jumps over the lazy dog."),
			includeUsage: true,
			wantFinish:   "stop",
		},
		{
			name:       "text without usage",
			reply:      Text("no usage chunk here"),
			wantFinish: "stop",
		},
		{
			name:         "reasoning then text",
			reply:        Reply{Reasoning: "Let me think about this for a while.", Text: "Done thinking."},
			includeUsage: true,
			wantFinish:   "stop",
		},
		{
			name:         "one tool call",
			reply:        Call("read", readArgs),
			includeUsage: true,
			wantCalls:    []ToolCall{{Name: "read", Arguments: readArgs}},
			wantFinish:   "tool_calls",
		},
		{
			name: "text and parallel tool calls",
			reply: Reply{Text: "Reading two files.", ToolCalls: []ToolCall{
				{ID: "call_custom", Name: "read", Arguments: readArgs},
				{Name: "grep", Arguments: `{"pattern":"func (s \\*Server)","path":"."}`},
			}},
			includeUsage: true,
			wantCalls: []ToolCall{
				{ID: "call_custom", Name: "read", Arguments: readArgs},
				{Name: "grep", Arguments: `{"pattern":"func (s \\*Server)","path":"."}`},
			},
			wantFinish: "tool_calls",
		},
		{
			name:       "malformed arguments are streamed as they are",
			reply:      Call("edit", `{"path": "a.go", "old": "x`),
			wantCalls:  []ToolCall{{Name: "edit", Arguments: `{"path": "a.go", "old": "x`}},
			wantFinish: "tool_calls",
		},
		{
			name:       "multibyte text and control characters",
			reply:      Text("héllo wörld ✓ 日本語\n\t\"quoted\" \\ \u2028 end\x01"),
			wantFinish: "stop",
		},
		{
			name:         "usage and finish reason as given",
			reply:        Reply{Text: "cut short", FinishReason: "length", Usage: &Usage{PromptTokens: 100, CompletionTokens: 7, CachedTokens: 60}},
			includeUsage: true,
			wantFinish:   "length",
			wantUsage:    &Usage{PromptTokens: 100, CompletionTokens: 7, CachedTokens: 60},
		},
		{
			name:       "whole tool call in one delta",
			reply:      Reply{Pieces: 1, ToolCalls: []ToolCall{{Name: "ls", Arguments: `{"path":"."}`}}},
			wantCalls:  []ToolCall{{Name: "ls", Arguments: `{"path":"."}`}},
			wantFinish: "tool_calls",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(tt.reply)
			defer s.Close()
			events, err := streamEvents(t, s, tt.includeUsage)
			if err != nil {
				t.Fatalf("stream ended with %v", err)
			}
			a := assemble(t, events)

			first := a.chunks[0].Choices[0].Delta
			if first.Role == nil || *first.Role != "assistant" || first.Content == nil || *first.Content != "" {
				t.Errorf("first delta is not {role: assistant, content: \"\"}: %+v", first)
			}
			for i, c := range a.chunks {
				if c.Object != "chat.completion.chunk" || c.Model != "test-model" || c.ID != a.chunks[0].ID || c.Created == 0 {
					t.Errorf("chunk %d header: %+v", i, c)
				}
			}
			if !a.keepAlive {
				t.Error("no keep-alive comment")
			}
			if !a.done || events[len(events)-1].Data != "[DONE]" {
				t.Error("stream does not end with [DONE]")
			}
			if a.text != tt.reply.Text {
				t.Errorf("text = %q, want %q", a.text, tt.reply.Text)
			}
			if a.reasoning != tt.reply.Reasoning {
				t.Errorf("reasoning = %q, want %q", a.reasoning, tt.reply.Reasoning)
			}
			if a.finish != tt.wantFinish {
				t.Errorf("finish_reason = %q, want %q", a.finish, tt.wantFinish)
			}
			checkCalls(t, a, tt.wantCalls, tt.reply.pieces())

			// The finish chunk has an empty delta; the usage chunk, if
			// any, has no choices and comes last before [DONE].
			last := a.chunks[len(a.chunks)-1]
			if tt.includeUsage {
				if last.Choices == nil || len(last.Choices) != 0 || last.Usage == nil {
					t.Fatalf("last chunk is not a usage chunk with choices:[]: %+v", last)
				}
				u := last.Usage
				if u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.PromptTokens < 1 || u.CompletionTokens < 1 {
					t.Errorf("implausible usage %+v", *u)
				}
				if w := tt.wantUsage; w != nil && (u.PromptTokens != w.PromptTokens || u.CompletionTokens != w.CompletionTokens || u.PromptTokensDetails.CachedTokens != w.CachedTokens) {
					t.Errorf("usage = %+v, want %+v", *u, *w)
				}
				last = a.chunks[len(a.chunks)-2]
			}
			for _, c := range a.chunks {
				if c.Usage != nil && c.Usage != a.chunks[len(a.chunks)-1].Usage {
					t.Errorf("usage in a chunk other than the last: %+v", c)
				}
			}
			if len(last.Choices) != 1 || last.Choices[0].FinishReason == nil {
				t.Fatalf("finish chunk missing: %+v", last)
			}
			if d := last.Choices[0].Delta; d.Content != nil || d.Role != nil || d.ToolCalls != nil {
				t.Errorf("finish chunk delta not empty: %+v", d)
			}
			finishes := 0
			for _, c := range a.chunks {
				if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
					finishes++
				}
			}
			if finishes != 1 {
				t.Errorf("%d chunks have a finish_reason, want 1", finishes)
			}
			if tt.reply.Text != "" && utf8.RuneCountInString(tt.reply.Text) >= 4 && tt.reply.pieces() >= 4 {
				n := 0
				for _, c := range a.chunks {
					if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
						n++
					}
				}
				if n < 3 {
					t.Errorf("text in %d deltas, want several", n)
				}
			}
		})
	}
}

// checkCalls compares the assembled tool calls with want.
func checkCalls(t *testing.T, a assembled, want []ToolCall, pieces int) {
	t.Helper()
	if len(a.calls) != len(want) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(a.calls), len(want), a.calls)
	}
	ids := map[string]bool{}
	for i, w := range want {
		got := a.calls[i]
		if w.ID != "" && got.ID != w.ID || w.ID == "" && !strings.HasPrefix(got.ID, "call_") {
			t.Errorf("call %d id = %q, want %q", i, got.ID, w.ID)
		}
		if ids[got.ID] {
			t.Errorf("call %d id %q repeated", i, got.ID)
		}
		ids[got.ID] = true
		if got.Name != w.Name || got.Arguments != w.Arguments {
			t.Errorf("call %d = %s(%s), want %s(%s)", i, got.Name, got.Arguments, w.Name, w.Arguments)
		}
		if min := min(pieces, 3); a.argPieces[i] < min {
			t.Errorf("call %d arguments in %d deltas, want at least %d", i, a.argPieces[i], min)
		}
	}
	// The first delta of each call carries id, type and name with empty
	// arguments; later ones carry only index and arguments.
	seen := map[int]bool{}
	for _, c := range a.chunks {
		if len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			if !seen[*tc.Index] {
				seen[*tc.Index] = true
				if tc.ID == nil || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil ||
					tc.Function.Arguments == nil || *tc.Function.Arguments != "" {
					t.Errorf("first delta of call %d lacks id/type/name or has arguments", *tc.Index)
				}
				continue
			}
			if tc.ID != nil || tc.Type != nil || tc.Function.Name != nil {
				t.Errorf("later delta of call %d repeats id/type/name", *tc.Index)
			}
		}
	}
}

func TestStreamDoesNotChangeQueuedReply(t *testing.T) {
	t.Parallel()
	calls := []ToolCall{{Name: "a", Arguments: "{}"}}
	s := NewServer(Reply{ToolCalls: calls}, Reply{ToolCalls: calls})
	defer s.Close()
	var ids []string
	for range 2 {
		events, err := streamEvents(t, s, false)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, assemble(t, events).calls[0].ID)
	}
	if calls[0].ID != "" {
		t.Errorf("caller's ToolCall got ID %q", calls[0].ID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two calls share the ID %q", ids[0])
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		n    int
		cut  bool
		want int // number of pieces
	}{
		{"", 4, false, 0},
		{"ab", 4, false, 2},
		{"abcdefghi", 4, false, 4},
		{"abcdefghij", 3, false, 3},
		{"日本語のテキスト", 4, false, 4},
		{"✓", 4, false, 1},
		{"abcdefgh", 4, true, 2},
		{"a", 4, true, 0},
		{"abcdefgh", 1, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			t.Parallel()
			var pieces []string
			split(tt.s, tt.n, tt.cut, func(p string) { pieces = append(pieces, p) })
			if len(pieces) != tt.want {
				t.Errorf("split(%q, %d, %v) = %q, want %d pieces", tt.s, tt.n, tt.cut, pieces, tt.want)
			}
			joined := strings.Join(pieces, "")
			if !tt.cut && joined != tt.s || tt.cut && !strings.HasPrefix(tt.s, joined) {
				t.Errorf("pieces %q do not rebuild %q", pieces, tt.s)
			}
			for _, p := range pieces {
				if !utf8.ValidString(p) {
					t.Errorf("piece %q splits a UTF-8 sequence", p)
				}
			}
		})
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\", "\n\r\t\x00\x1f\x7f", "héllo ✓", "\u2028\u2029", "bad \xff utf8", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("appendString(%q) = %s, not JSON: %v", s, got, err)
		}
		if want := decodeStd(t, s); back != want {
			t.Errorf("appendString(%q) decodes to %q, want %q", s, back, want)
		}
	})
}

// decodeStd is what encoding/json makes of s after a round trip.
func decodeStd(t *testing.T, s string) string {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	return back
}
