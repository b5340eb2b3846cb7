package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// testPNG is a small PNG image, in base64.
func testPNG(t *testing.T) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 12, 8))
	for i := range img.Pix {
		img.Pix[i] = 0x99
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// requestImages returns the data URLs of the image parts of a recorded
// model request's last user message.
func requestImages(t *testing.T, req llmtest.Request) []string {
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

// TestMessageWithImages: a message's images reach a model that reads
// images as image parts; the stored message names them without their
// data.
func TestMessageWithImages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *testOptions) { o.config = `"modelSettings":{"fake/fake-model":{"images":true}}` }, llmtest.Text("a grey square"))
	f.llm.RecordBodies(true)
	s := f.newSession()
	data := testPNG(t)
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "what is this?",
		Images: []protocol.Image{{Data: data, Name: "../../shot.png", MIME: "text/plain"}}}, nil, http.StatusAccepted)
	f.waitIdle(s.ID)
	reqs := f.llm.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if got := requestImages(t, reqs[0]); len(got) != 1 || got[0] != "data:image/png;base64,"+data {
		t.Errorf("image parts of the request: %.80q", got)
	}
	var d protocol.SessionDetail
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
	var user *protocol.Message
	for i := range d.Messages {
		if d.Messages[i].Role == protocol.RoleUser {
			user = &d.Messages[i]
		}
	}
	if user == nil || len(user.Images) != 1 || user.Images[0].Name != "shot.png" || user.Images[0].MIME != "image/png" || user.Images[0].Width != 12 {
		t.Errorf("stored user message: %+v", user)
	}
	for _, e := range f.storedEvents(s.ID) {
		if e.Message != nil && len(e.Message.Images) > 0 && e.Message.Images[0].Data != "" {
			t.Errorf("%s carries the image's data", e.Type)
		}
	}
}

// TestMessageWithImagesRefused: images for a model that does not read
// them, images that are none, too many or too large, and images that
// would have to wait in the queue are refused, and nothing is sent.
func TestMessageWithImagesRefused(t *testing.T) {
	t.Parallel()
	data := testPNG(t)
	huge := base64.StdEncoding.EncodeToString(make([]byte, 9<<20))
	for _, tc := range []struct {
		name   string
		images []protocol.Image
		status int
		code   string
		says   string
	}{
		{"text-only model", []protocol.Image{{Data: data}}, http.StatusBadRequest, protocol.CodeBadRequest, "does not accept images"},
		{"not an image", []protocol.Image{{Data: base64.StdEncoding.EncodeToString([]byte("hello")), Name: "notes.txt"}}, http.StatusBadRequest, protocol.CodeBadRequest, "notes.txt: not a PNG, JPEG, GIF or WebP image"},
		{"not base64", []protocol.Image{{Data: "%%%"}}, http.StatusBadRequest, protocol.CodeBadRequest, "image 1: the data is not base64"},
		{"too many", []protocol.Image{{Data: data}, {Data: data}, {Data: data}, {Data: data}, {Data: data}}, http.StatusBadRequest, protocol.CodeBadRequest, "at most 4"},
		{"too large", []protocol.Image{{Data: huge, Name: "big.png"}}, http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "big.png: image too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, llmtest.Text("never"))
			s := f.newSession()
			resp, body := f.request("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "look", Images: tc.images}, f.auth())
			checkError(t, tc.name, resp, body, tc.status, tc.code)
			if !strings.Contains(string(body), tc.says) {
				t.Errorf("%s: the error does not say %q: %s", tc.name, tc.says, body)
			}
			if n := len(f.llm.ChatRequests()); n != 0 {
				t.Errorf("%s: %d model requests", tc.name, n)
			}
		})
	}
	t.Run("busy", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, func(o *testOptions) { o.config = `"modelSettings":{"fake/fake-model":{"images":true}}` },
			llmtest.Reply{Text: "slow answer", Pieces: 10, ChunkDelay: 100 * time.Millisecond})
		s := f.newSession()
		f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "first"}, nil, http.StatusAccepted)
		resp, body := f.request("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "look", Images: []protocol.Image{{Data: data}}}, f.auth())
		checkError(t, "images while busy", resp, body, http.StatusConflict, protocol.CodeSessionBusy)
		f.waitIdle(s.ID)
		if q, _ := f.app.Store.QueuedInputs(t.Context(), s.ID); len(q) != 0 {
			t.Errorf("queued: %+v", q)
		}
		if n := len(f.llm.ChatRequests()); n != 1 {
			t.Errorf("%d model requests, want the first message's only", n)
		}
	})
}
