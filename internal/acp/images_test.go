package acp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

func smallPNG(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 9, 7))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// imageURLs returns the image parts' URLs of a recorded request's last
// user message.
func imageURLs(t *testing.T, req llmtest.Request) []string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, m := range body.Messages {
		if m.Role != "user" {
			continue
		}
		urls = nil
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "image_url" {
					urls = append(urls, p.ImageURL.URL)
				}
			}
		}
	}
	return urls
}

// TestPromptWithImage: for a model that reads images, initialize offers
// image prompts and an image block reaches the model as an image part.
func TestPromptWithImage(t *testing.T) {
	t.Parallel()
	ac := newAgentConfig(t, app.Options{}, false, `"modelSettings":{"fake/fake-model":{"images":true}}`, llmtest.Text("a dark rectangle"))
	ac.srv.RecordBodies(true)
	var init initializeResult
	ac.must("initialize", initializeParams{ProtocolVersion: 1}, &init)
	if !init.AgentCapabilities.PromptCapabilities.Image {
		t.Error("initialize: promptCapabilities.image is false for a model that reads images")
	}
	var s newSessionResult
	ac.must("session/new", newSessionParams{CWD: ac.ws}, &s)
	data := smallPNG(t)
	var r promptResult
	ac.must("session/prompt", promptParams{SessionID: s.SessionID, Prompt: []contentBlock{
		textBlock("What is in "), {Type: "image", Data: data, MimeType: "image/png", URI: "file:///tmp/shot.png"}, textBlock("?"),
	}}, &r)
	if r.StopReason != "end_turn" {
		t.Errorf("stop reason %q", r.StopReason)
	}
	reqs := ac.srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if got := imageURLs(t, reqs[0]); len(got) != 1 || got[0] != "data:image/png;base64,"+data {
		t.Errorf("the model's image parts: %.80q", got)
	}
}

// TestPromptWithImageRefused: for a model that does not read images,
// initialize does not offer image prompts, and one with an image block is
// refused with the reason before anything is sent; a block that is no
// image is refused too.
func TestPromptWithImageRefused(t *testing.T) {
	t.Parallel()
	ac := newAgent(t, app.Options{}, false, llmtest.Text("never"))
	var init initializeResult
	ac.must("initialize", initializeParams{ProtocolVersion: 1}, &init)
	if init.AgentCapabilities.PromptCapabilities.Image {
		t.Error("initialize: promptCapabilities.image is true for a text-only model")
	}
	var s newSessionResult
	ac.must("session/new", newSessionParams{CWD: ac.ws}, &s)
	for _, tc := range []struct {
		block contentBlock
		says  string
	}{
		{contentBlock{Type: "image", Data: smallPNG(t), MimeType: "image/png"}, "does not accept images"},
		{contentBlock{Type: "image", Data: base64.StdEncoding.EncodeToString([]byte("not a picture")), MimeType: "image/png"}, "not a PNG, JPEG, GIF or WebP image"},
	} {
		err := ac.call("session/prompt", promptParams{SessionID: s.SessionID, Prompt: []contentBlock{textBlock("look"), tc.block}}, nil)
		if err == nil || codeOf(t, err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("prompt with %.40q: %v, want invalid params saying %q", tc.block.Data, err, tc.says)
		}
	}
	if n := len(ac.srv.ChatRequests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}
