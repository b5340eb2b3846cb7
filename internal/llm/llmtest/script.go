package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Script is the JSON file cmd/fakellm serves:
//
//	{
//	  "models": ["fake-model"],
//	  "replies": [
//	    {"toolCalls": [{"name": "read", "arguments": "{\"path\":\"a.go\"}"}]},
//	    {"status": 429, "retryAfter": "1"},
//	    {"text": "done", "chunkDelayMs": 5}
//	  ],
//	  "fallback": {"text": "ok"}
//	}
//
// Only "replies" is needed. Unknown keys are an error.
type Script struct {
	// Models are the model ids GET /v1/models lists; empty keeps the
	// server's default.
	Models []string `json:"models,omitempty"`
	// Replies are answered in order, one per chat request.
	Replies []Reply `json:"replies"`
	// Fallback, if set, answers every chat request after the replies run
	// out; otherwise the server's default text reply does.
	Fallback *Reply `json:"fallback,omitempty"`
}

// ParseScript reads a Script from its JSON text.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parse script: text after the script object")
	}
	return &s, nil
}

// LoadScript reads the replies of the Script in the file at path.
func LoadScript(path string) ([]Reply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s.Replies, nil
}

// ReplayFile returns a Reply that sends the recorded event stream in the
// file at path verbatim (see Reply.SSE).
func ReplayFile(path string) (Reply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Reply{}, fmt.Errorf("replay file: %w", err)
	}
	return Reply{SSE: string(data)}, nil
}
