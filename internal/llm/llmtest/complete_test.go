package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

func TestComplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		reply       Reply
		wantContent *string
		wantFinish  string
	}{
		{name: "text", reply: Text("hello there"), wantContent: ptr("hello there"), wantFinish: "stop"},
		{name: "empty", reply: Reply{}, wantContent: ptr(""), wantFinish: "stop"},
		{
			name:       "tool calls have null content",
			reply:      Reply{Reasoning: "hmm", ToolCalls: []ToolCall{{Name: "ls", Arguments: `{"path":"."}`}, {ID: "c9", Name: "cat", Arguments: "not json"}}},
			wantFinish: "tool_calls",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(tt.reply)
			defer s.Close()
			resp := post(t, t.Context(), s, chatBody(false, false))
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Model   string `json:"model"`
				Choices []struct {
					Message struct {
						Role      string  `json:"role"`
						Content   *string `json:"content"`
						Reasoning string  `json:"reasoning_content"`
						ToolCalls []struct {
							ID       string `json:"id"`
							Type     string `json:"type"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"message"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
				Usage struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
					TotalTokens      int `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			if got.Object != "chat.completion" || got.Model != "test-model" || len(got.Choices) != 1 {
				t.Fatalf("unexpected completion %s", data)
			}
			m := got.Choices[0].Message
			if m.Role != "assistant" || (m.Content == nil) != (tt.wantContent == nil) ||
				m.Content != nil && *m.Content != *tt.wantContent {
				t.Errorf("message = %s", data)
			}
			if m.Reasoning != tt.reply.Reasoning {
				t.Errorf("reasoning_content = %q, want %q", m.Reasoning, tt.reply.Reasoning)
			}
			if len(m.ToolCalls) != len(tt.reply.ToolCalls) {
				t.Fatalf("got %d tool calls, want %d", len(m.ToolCalls), len(tt.reply.ToolCalls))
			}
			for i, w := range tt.reply.ToolCalls {
				g := m.ToolCalls[i]
				if g.ID == "" || w.ID != "" && g.ID != w.ID || g.Type != "function" ||
					g.Function.Name != w.Name || g.Function.Arguments != w.Arguments {
					t.Errorf("tool call %d = %+v, want %+v", i, g, w)
				}
			}
			if got.Choices[0].FinishReason != tt.wantFinish {
				t.Errorf("finish_reason = %q, want %q", got.Choices[0].FinishReason, tt.wantFinish)
			}
			if u := got.Usage; u.PromptTokens < 1 || u.CompletionTokens < 1 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("implausible usage %+v", u)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
