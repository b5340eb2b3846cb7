package openai

import (
	"encoding/json"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// TestRequestImages: a user message's images are image_url content parts
// with data URLs; tool results' images follow the results in one user
// message, since chat completions take images only from users.
func TestRequestImages(t *testing.T) {
	t.Parallel()
	req := &llm.Request{Model: "m", Messages: []llm.Message{
		{Role: "user", Content: "what is on it?", Images: []llm.Image{{MIME: "image/png", Data: "UE5HREFUQQ=="}}},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{}`}, {ID: "c2", Name: "read_file", Arguments: `{}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "Image a.png attached", Images: []llm.Image{{MIME: "image/jpeg", Data: "/9g="}}},
		{Role: "tool", ToolCallID: "c2", Content: "plain"},
		{Role: "assistant", Content: "ok"},
	}}
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(appendRequest(nil, req), &body); err != nil {
		t.Fatal(err)
	}
	type part struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	parts := func(raw json.RawMessage) []part {
		var ps []part
		if err := json.Unmarshal(raw, &ps); err != nil {
			t.Fatalf("content %s is not an array of parts: %v", raw, err)
		}
		return ps
	}
	if len(body.Messages) != 6 {
		t.Fatalf("%d messages, want 6", len(body.Messages))
	}
	u := parts(body.Messages[0].Content)
	if len(u) != 2 || u[0].Type != "text" || u[0].Text != "what is on it?" || u[1].Type != "image_url" || u[1].ImageURL.URL != "data:image/png;base64,UE5HREFUQQ==" {
		t.Errorf("user message = %+v", u)
	}
	if string(body.Messages[2].Content) != `"Image a.png attached"` || body.Messages[3].ToolCallID != "c2" {
		t.Errorf("tool results = %s, %s", body.Messages[2].Content, body.Messages[3].ToolCallID)
	}
	img := body.Messages[4]
	ps := parts(img.Content)
	if img.Role != "user" || len(ps) != 2 || ps[0].Text != toolImagesNote || ps[1].ImageURL.URL != "data:image/jpeg;base64,/9g=" {
		t.Errorf("tool images message = %s %+v", img.Role, ps)
	}
	if body.Messages[5].Role != "assistant" {
		t.Errorf("last message = %s", body.Messages[5].Role)
	}
}
