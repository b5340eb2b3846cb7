package llm

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNewAPIError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		body      string
		wantErr   string
		wantType  string
		wantCode  string
		retryable bool
	}{
		{
			name:     "openai",
			status:   400,
			body:     `{"error":{"message":"Unsupported parameter: 'max_tokens'.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`,
			wantErr:  "provider returned 400 Bad Request: Unsupported parameter: 'max_tokens'.",
			wantType: "invalid_request_error",
			wantCode: "unsupported_parameter",
		},
		{
			name:      "rate limit",
			status:    429,
			body:      `{"error":{"message":"Rate limit reached","type":"requests","code":null}}`,
			wantErr:   "provider returned 429 Too Many Requests: Rate limit reached",
			wantType:  "requests",
			retryable: true,
		},
		{
			name:     "quota is not retryable",
			status:   429,
			body:     `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			wantErr:  "provider returned 429 Too Many Requests: You exceeded your current quota",
			wantType: "insufficient_quota",
			wantCode: "insufficient_quota",
		},
		{
			name:    "ollama string error",
			status:  404,
			body:    `{"error":"model \"llama9\" not found, try pulling it first"}`,
			wantErr: `provider returned 404 Not Found: model "llama9" not found, try pulling it first`,
		},
		{
			name:     "vllm top-level message and numeric code",
			status:   400,
			body:     `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			wantErr:  "provider returned 400 Bad Request: max_tokens is too large",
			wantType: "BadRequestError",
			wantCode: "400",
		},
		{
			name:     "array body",
			status:   400,
			body:     `[{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}]`,
			wantErr:  "provider returned 400 Bad Request: Invalid JSON payload",
			wantCode: "400",
		},
		{
			name:    "fastapi detail",
			status:  422,
			body:    `{"detail":"Not authenticated"}`,
			wantErr: "provider returned 422 Unprocessable Entity: Not authenticated",
		},
		{
			name:      "html body",
			status:    502,
			body:      "<html><body>Bad gateway</body></html>",
			wantErr:   "provider returned 502 Bad Gateway: <html><body>Bad gateway</body></html>",
			retryable: true,
		},
		{
			name:      "empty body",
			status:    503,
			wantErr:   "provider returned 503 Service Unavailable",
			retryable: true,
		},
		{
			name:      "overloaded",
			status:    529,
			body:      "overloaded",
			wantErr:   "provider returned 529 Site Overloaded: overloaded",
			retryable: true,
		},
		{
			name:    "not implemented is final",
			status:  501,
			wantErr: "provider returned 501 Not Implemented",
		},
		{
			name:      "request timeout",
			status:    408,
			wantErr:   "provider returned 408 Request Timeout",
			retryable: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := NewAPIError(tt.status, []byte(tt.body), 0)
			if got := e.Error(); got != tt.wantErr {
				t.Errorf("Error() = %q, want %q", got, tt.wantErr)
			}
			if e.Type != tt.wantType || e.Code != tt.wantCode {
				t.Errorf("Type, Code = %q, %q; want %q, %q", e.Type, e.Code, tt.wantType, tt.wantCode)
			}
			if e.Retryable != tt.retryable {
				t.Errorf("Retryable = %v, want %v", e.Retryable, tt.retryable)
			}
			if e.Body != tt.body {
				t.Errorf("Body = %q, want %q", e.Body, tt.body)
			}
		})
	}
}

func TestNewAPIErrorLongBody(t *testing.T) {
	t.Parallel()
	// 999 ASCII bytes, then a 3-byte character across the 1000 limit.
	body := strings.Repeat("x", 999) + "€" + strings.Repeat("y", 5000)
	e := NewAPIError(500, []byte(body), 2*time.Second)
	if len(e.Body) != 999 || !utf8.ValidString(e.Body) {
		t.Fatalf("Body has %d bytes (valid UTF-8: %v), want the 999 before the cut character", len(e.Body), utf8.ValidString(e.Body))
	}
	if got := e.Error(); len(got) > MaxErrorBody+128 {
		t.Fatalf("Error() is %d bytes long", len(got))
	}
	if e.RetryAfter != 2*time.Second {
		t.Fatalf("RetryAfter = %v", e.RetryAfter)
	}

	// A JSON error longer than the kept body still gives its message.
	long := `{"error":{"message":"bad tool call","code":"tool_use_failed","failed_generation":"` + strings.Repeat("z", 3000) + `"}}`
	e = NewAPIError(400, []byte(long), 0)
	if e.Message != "bad tool call" || len(e.Body) != MaxErrorBody {
		t.Fatalf("Message = %q, len(Body) = %d", e.Message, len(e.Body))
	}
}

func TestStreamError(t *testing.T) {
	t.Parallel()
	e := &StreamError{Type: "invalid_request_error", Code: "tool_use_failed", Message: "Tool call validation failed", Status: 400}
	if got, want := e.Error(), "provider error during stream: Tool call validation failed (code tool_use_failed)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	cut := &StreamError{Err: fmt.Errorf("%w: read: %w", ErrIncompleteStream, io.ErrUnexpectedEOF)}
	if !errors.Is(cut, ErrIncompleteStream) || !errors.Is(cut, io.ErrUnexpectedEOF) {
		t.Errorf("errors.Is fails on %v", cut)
	}
	if got, want := cut.Error(), "stream ended before the response finished: read: unexpected EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestParseErrorPayload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ErrorPayload
		ok   bool
	}{
		{`{"error":{"message":"m","type":"t","code":"c","status_code":400}}`, ErrorPayload{Message: "m", Type: "t", Code: "c", Status: 400}, true},
		{`{"error":{"message":"m","code":429}}`, ErrorPayload{Message: "m", Code: "429"}, true},
		{`{"error":null}`, ErrorPayload{}, false},
		{`{"choices":[]}`, ErrorPayload{}, false},
		{`not json`, ErrorPayload{}, false},
		{``, ErrorPayload{}, false},
		{`[]`, ErrorPayload{}, false},
		{`"just a string"`, ErrorPayload{}, false},
		{`{"error":{"message":{"nested":true}}}`, ErrorPayload{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseErrorPayload([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseErrorPayload(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestAPIErrorSaysHowLongToWait: a provider's Retry-After is part of the
// message, in units people read.
func TestAPIErrorSaysHowLongToWait(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		wait time.Duration
		want string
	}{
		{90 * time.Second, "wait 1m30s before"},
		{time.Hour, "wait 1h before"},
		{2*time.Hour + 5*time.Minute + 400*time.Millisecond, "wait 2h5m before"},
		{1500 * time.Millisecond, "wait 2s before"},
		{250 * time.Millisecond, "wait 250ms before"},
	} {
		e := NewAPIError(429, []byte(`{"error":{"message":"Rate limit reached"}}`), tt.wait)
		if !strings.Contains(e.Error(), tt.want) || !strings.HasPrefix(e.Error(), "provider returned 429 Too Many Requests: Rate limit reached") {
			t.Errorf("%v: Error() = %q, want %q", tt.wait, e.Error(), tt.want)
		}
	}
	if e := NewAPIError(429, nil, 0); strings.Contains(e.Error(), "wait") {
		t.Errorf("no Retry-After, yet %q", e.Error())
	}
}
