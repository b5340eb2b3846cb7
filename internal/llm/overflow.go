package llm

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// A request longer than the model's context window is refused by every
// provider, each in its own words: OpenAI and Azure say code
// context_length_exceeded; DeepSeek, vLLM and other OpenAI-compatible
// servers "This model's maximum context length is N tokens" with a generic
// code; llama.cpp's server type exceed_context_size_error; Gemini's
// OpenAI-compatible endpoint "The input token count (N) exceeds the maximum
// number of tokens allowed (M)"; Anthropic-style gateways "prompt is too
// long: N tokens > M maximum". IsContextOverflow knows them all, so the
// agent can compact and try again instead of failing.

// overflowCodes are error codes and types that mean the request was over
// the context window.
var overflowCodes = []string{"context_length_exceeded", "exceed_context_size_error", "model_context_window_exceeded"}

// overflowPhrases are lower-case phrases of such errors' messages.
var overflowPhrases = []string{
	"maximum context length",
	"context length exceeded",
	"context_length_exceeded",
	"exceeds the available context size",
	"exceed context window",
	"context size has been exceeded",
	"context window exceeded",
	"exceeds the context window",
	"prompt is too long",
	"input is too long for the model",
	"please reduce the length of the messages",
	"exceeds the maximum number of tokens allowed",
	"too large for model with",
}

// IsContextOverflow reports whether err is a provider's refusal of a
// request that is longer than the model's context window: an *APIError
// (HTTP 400, 413 or a server error some local servers use) or a
// *StreamError carrying one of the known codes or messages.
func IsContextOverflow(err error) bool {
	code, text, ok := errorText(err)
	if !ok {
		return false
	}
	for _, c := range overflowCodes {
		if strings.EqualFold(code, c) {
			return true
		}
	}
	text = strings.ToLower(text)
	for _, p := range overflowPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// errorText returns the code, type and message (with the start of the
// body) of a provider error.
func errorText(err error) (code, text string, ok bool) {
	var api *APIError
	var se *StreamError
	switch {
	case errors.As(err, &api):
		if api.Retryable && api.Status != 500 {
			return "", "", false // busy, not too long
		}
		code = api.Code
		if code == "" || code == strconv.Itoa(api.Status) {
			code = api.Type
		}
		return code, api.Type + " " + api.Message + " " + api.Body, true
	case errors.As(err, &se):
		code = se.Code
		if code == "" {
			code = se.Type
		}
		return code, se.Type + " " + se.Message, true
	}
	return "", "", false
}

// contextLimits find the window a provider's overflow message names.
var contextLimits = []*regexp.Regexp{
	regexp.MustCompile(`maximum context length is (\d+)`),                  // OpenAI, DeepSeek, vLLM
	regexp.MustCompile(`maximum number of tokens allowed \((\d+)\)`),       // Gemini
	regexp.MustCompile(`available context size \((\d+) tokens\)`),          // llama.cpp
	regexp.MustCompile(`"n_ctx":\s*(\d+)`),                                 // llama.cpp's body
	regexp.MustCompile(`(\d+) maximum context length`),                     // Mistral
	regexp.MustCompile(`tokens > (\d+) maximum`),                           // Anthropic-style
	regexp.MustCompile(`context (?:window|length) (?:is|of) (\d+) tokens`), // others
}

// ContextLimit returns the context window, in tokens, that a provider's
// overflow error names, or 0 if it names none.
func ContextLimit(err error) int {
	_, text, ok := errorText(err)
	if !ok {
		return 0
	}
	for _, re := range contextLimits {
		if m := re.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
