package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxErrorBody is how many bytes of an error response's body an APIError
// keeps.
const MaxErrorBody = 1000

// ErrIncompleteStream is the cause of a StreamError for a stream that ended
// before the response finished: no finish reason and no end marker.
var ErrIncompleteStream = errors.New("stream ended before the response finished")

// APIError is a provider's non-2xx answer to a request. It never holds the
// request or its headers, so it is safe to show and to log.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Type, Code and Message come from the provider's JSON error body, if
	// it sent one ("invalid_request_error", "unsupported_parameter", ...).
	Type, Code, Message string
	// Body is the start of the raw body, at most MaxErrorBody bytes, cut
	// at a character boundary.
	Body string
	// RetryAfter is the wait the provider asked for (Retry-After), or 0.
	RetryAfter time.Duration
	// Retryable says whether sending the same request again may succeed:
	// true for 408, 429 and the transient 5xx codes (500, 502, 503, 504,
	// 529), unless the provider said otherwise (a 429 for an exhausted
	// quota is not retryable).
	Retryable bool
}

// Error returns "provider returned 400 Bad Request: <message>", with the
// start of the body in place of the message when the body was not a JSON
// error.
func (e *APIError) Error() string {
	s := "provider returned " + strconv.Itoa(e.Status)
	if t := statusText(e.Status); t != "" {
		s += " " + t
	}
	switch {
	case e.Message != "":
		s += ": " + e.Message
	case e.Body != "":
		s += ": " + e.Body
	}
	if e.RetryAfter > 0 {
		s += " (it asks to wait " + HumanDuration(e.RetryAfter) + " before the next request)"
	}
	return s
}

// HumanDuration renders a wait for people, to the second and without
// zero units: "45s", "1m30s", "1h", "2h5m".
func HumanDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	var b strings.Builder
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.d
		}
	}
	return b.String()
}

func statusText(code int) string {
	if code == 529 {
		return "Site Overloaded" // Anthropic's and some gateways' overload code
	}
	return http.StatusText(code)
}

// NewAPIError builds the error for a non-2xx response from its status,
// the start of its body (at least MaxErrorBody bytes when there are that
// many, so a longer JSON error can still be parsed) and the Retry-After wait
// (see ParseRetryAfter). It understands the usual error bodies of
// OpenAI-compatible servers: {"error":{"message","type","code"}},
// {"error":"text"}, {"message":...} and a one-element array of those.
func NewAPIError(status int, body []byte, retryAfter time.Duration) *APIError {
	e := &APIError{
		Status:     status,
		Body:       string(truncateUTF8(body, MaxErrorBody)),
		RetryAfter: retryAfter,
		Retryable:  RetryableStatus(status),
	}
	if p, ok := ParseErrorPayload(body); ok {
		e.Type, e.Code, e.Message = p.Type, p.Code, p.Message
	}
	if e.Code == "insufficient_quota" {
		// OpenAI answers 429 when the account is out of credit; waiting
		// does not help.
		e.Retryable = false
	}
	return e
}

// RetryableStatus reports whether a response with this HTTP status may
// succeed if the same request is sent again.
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// StreamError is an error that arrived after the provider accepted the
// request (HTTP 200): an error event or payload in the stream, a chunk that
// could not be decoded, or a stream that broke or ended before the response
// finished. The partial response is discarded. Clients do not retry these.
type StreamError struct {
	// Type, Code and Message come from the provider's error payload; they
	// are empty when the stream broke.
	Type, Code, Message string
	// Status is the HTTP-like status the provider put in its error
	// payload (Groq's status_code), or 0.
	Status int
	// Err is the cause when the stream broke or ended early: a read or
	// decode error, or ErrIncompleteStream.
	Err error
}

// Error describes the failure, with the provider's message when there is
// one.
func (e *StreamError) Error() string {
	switch {
	case e.Message != "" || e.Code != "":
		s := "provider error during stream: " + e.Message
		if e.Code != "" {
			s += " (code " + e.Code + ")"
		}
		return s
	case e.Err != nil:
		return e.Err.Error()
	}
	return "provider error during stream"
}

// Unwrap returns Err.
func (e *StreamError) Unwrap() error { return e.Err }

// TooLargeError is the error of a response abandoned because it went past
// a size cap of its request (Request.MaxAnswerBytes, or MaxDroppedBytes of
// too large tool-call arguments). Nothing of the response is returned.
type TooLargeError struct {
	// What went past the cap: "answer" or "tool-call arguments".
	What string
	// Limit is the cap in bytes.
	Limit int64
}

// Error says what was too large and that the response was dropped.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the model's %s went past the limit of %s; the response was abandoned and nothing of it was kept",
		e.What, FormatBytes(e.Limit))
}

// FormatBytes renders a size for people: "512 bytes", "64 KiB", "1.5 MiB".
func FormatBytes(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < k*k:
		return trimZero(float64(n)/k) + " KiB"
	case n < k*k*k:
		return trimZero(float64(n)/(k*k)) + " MiB"
	}
	return trimZero(float64(n)/(k*k*k)) + " GiB"
}

func trimZero(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// ErrorPayload is the error object of a provider's JSON error body or
// error event.
type ErrorPayload struct {
	Message, Type, Code string
	// Status is a status code written inside the payload, or 0.
	Status int
}

// ParseErrorPayload extracts the error from a provider's JSON error body
// or stream payload (see NewAPIError for the shapes). It reports false when
// data holds no recognisable error.
func ParseErrorPayload(data []byte) (ErrorPayload, bool) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(data, &arr) != nil || len(arr) == 0 {
			return ErrorPayload{}, false
		}
		data = arr[0]
	}
	var outer struct {
		Error json.RawMessage `json:"error"`
		errorObject
	}
	if json.Unmarshal(data, &outer) != nil {
		return ErrorPayload{}, false
	}
	obj := outer.errorObject
	if e := bytes.TrimSpace(outer.Error); len(e) > 0 && e[0] == '{' {
		obj = errorObject{}
		if json.Unmarshal(e, &obj) != nil {
			return ErrorPayload{}, false
		}
	} else if len(e) > 0 && e[0] == '"' {
		var msg string
		if json.Unmarshal(e, &msg) != nil {
			return ErrorPayload{}, false
		}
		if obj.Message == "" {
			obj.Message = msg
		}
	}
	p := ErrorPayload{
		Message: obj.Message,
		Type:    jsonScalar(obj.Type),
		Code:    jsonScalar(obj.Code),
	}
	if p.Message == "" {
		p.Message = jsonScalar(obj.Detail)
	}
	if n, err := strconv.Atoi(jsonScalar(obj.StatusCode)); err == nil {
		p.Status = n
	}
	return p, p.Message != "" || p.Code != "" || p.Type != ""
}

type errorObject struct {
	Message    string          `json:"message"`
	Type       json.RawMessage `json:"type"`
	Code       json.RawMessage `json:"code"`
	Detail     json.RawMessage `json:"detail"`
	StatusCode json.RawMessage `json:"status_code"`
}

// jsonScalar renders a JSON string or number as text; anything else
// (null, objects) as "".
func jsonScalar(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw)
	}
	return ""
}

// truncateUTF8 returns at most n bytes of b, without splitting a
// character.
func truncateUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}
