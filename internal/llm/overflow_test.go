package llm

import (
	"errors"
	"fmt"
	"testing"
)

// TestIsContextOverflow: the refusals of common providers for a request
// over the model's context window, in the shapes they send (from public
// bug reports), are recognised, with the window they name; other 400s and
// a busy server are not.
func TestIsContextOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   bool
		limit  int
	}{
		{"openai", 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, true, 8192},
		{"openai with completion", 400, `{"error":{"message":"This model's maximum context length is 4097 tokens. However, you requested 4120 tokens (3120 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, true, 4097},
		{"deepseek", 400, `{"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, true, 65536},
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, true, 8192},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, true, 8192},
		{"llama.cpp newer", 400, `{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}`, true, 4096},
		{"llama.cpp 500", 500, `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`, true, 0},
		{"gemini", 400, `[{"error":{"code":400,"message":"The input token count (1054016) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`, true, 1048576},
		{"anthropic style", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`, true, 200000},
		{"mistral", 400, `{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"}`, true, 32768},
		{"other 400", 400, `{"error":{"message":"Invalid max_tokens value, the valid range of max_tokens is [1, 8192]","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, false, 0},
		{"rate limit", 429, `{"error":{"message":"Rate limit reached for requests","type":"requests"}}`, false, 0},
		{"busy 503", 503, `{"error":{"message":"maximum context length is busy"}}`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := fmt.Errorf("turn: %w", NewAPIError(tt.status, []byte(tt.body), 0))
			if got := IsContextOverflow(err); got != tt.want {
				t.Errorf("IsContextOverflow = %v, want %v (%v)", got, tt.want, err)
			}
			if got := ContextLimit(err); got != tt.limit {
				t.Errorf("ContextLimit = %d, want %d", got, tt.limit)
			}
		})
	}
	se := &StreamError{Code: "context_length_exceeded", Message: "too long"}
	if !IsContextOverflow(se) {
		t.Error("an overflow sent in the stream was not recognised")
	}
	if IsContextOverflow(errors.New("maximum context length is 10 tokens")) {
		t.Error("a non-provider error was taken for an overflow")
	}
}
