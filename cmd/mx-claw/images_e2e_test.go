package main_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// imageParts returns, per message of a recorded request, the data URLs of
// its image_url content parts.
func imageParts(t *testing.T, req llmtest.Request) (roles []string, urls [][]string) {
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
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		var u []string
		if json.Unmarshal(m.Content, &parts) == nil {
			for _, p := range parts {
				if p.Type == "image_url" {
					u = append(u, p.ImageURL.URL)
				}
			}
		}
		urls = append(urls, u)
	}
	return roles, urls
}

func pngFile(t *testing.T, w, h int, noise bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(img.Pix); i += 4 {
		v := r.Uint32()
		if !noise {
			v = 0x336699
		}
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 255
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// visionEnv is an env whose fake model reads images (modelSettings).
func visionEnv(t *testing.T, replies ...llmtest.Reply) *env {
	e := newEnv(t, replies...)
	e.writeHome("config.json", fmt.Sprintf(`{"version":1,"activeProvider":"fake","providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model","other-model"],"apiKey":"","requiresApiKey":false,"configured":true}},"modelSettings":{"fake/fake-model":{"images":true}}}`, e.srv.URL()))
	return e
}

func TestRunImage(t *testing.T) {
	t.Parallel()
	small := pngFile(t, 32, 24, false)
	t.Run("sent as a content part", func(t *testing.T) {
		e := visionEnv(t, llmtest.Text("A blue square."))
		e.writeWS("shot.png", string(small))
		r := e.run("", "run", "--image", "shot.png", "what is on this screenshot?")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		reqs := e.srv.ChatRequests()
		roles, urls := imageParts(t, reqs[0])
		last := len(roles) - 1
		if roles[last] != "user" || len(urls[last]) != 1 || urls[last][0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
			t.Fatalf("last message: %s with images %v", roles[last], urls[last])
		}
		if reqs[0].Chat.Messages[last].Content != "what is on this screenshot?" {
			t.Errorf("text part = %q", reqs[0].Chat.Messages[last].Content)
		}
	})
	t.Run("text-only model refuses", func(t *testing.T) {
		e := newEnv(t, llmtest.Text("never asked"))
		e.writeWS("shot.png", string(small))
		r := e.run("", "run", "--image", "shot.png", "what is on it?")
		if r.code != 2 || !strings.Contains(r.stderr, "does not accept images") || !strings.Contains(r.stderr, "modelSettings") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
		if n := len(e.srv.ChatRequests()); n != 0 {
			t.Errorf("%d requests reached the model", n)
		}
	})
	t.Run("not an image", func(t *testing.T) {
		e := visionEnv(t)
		e.writeWS("notes.txt", "text\n")
		r := e.run("", "run", "--image", "notes.txt", "look")
		if r.code != 2 || !strings.Contains(r.stderr, "not a PNG, JPEG, GIF or WebP image") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("huge image downscaled", func(t *testing.T) {
		e := visionEnv(t, llmtest.Text("noise"))
		big := pngFile(t, 3600, 2025, true)
		if len(big) < 20<<20 {
			t.Fatalf("test image is %d bytes", len(big))
		}
		if err := os.WriteFile(filepath.Join(e.ws, "big.png"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.run("", "run", "--image", "big.png", "what is it?")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		_, urls := imageParts(t, e.srv.ChatRequests()[0])
		u := urls[len(urls)-1]
		if len(u) != 1 {
			t.Fatalf("images = %d", len(u))
		}
		mime, b64, _ := strings.Cut(strings.TrimPrefix(u[0], "data:"), ";base64,")
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || len(data) > 3<<20 || max(cfg.Width, cfg.Height) > 2048 {
			t.Errorf("sent %s of %d bytes, %d×%d (%v)", mime, len(data), cfg.Width, cfg.Height, err)
		}
	})
}

// TestReadFileImageReachesModel: read_file of an image gives the model the
// picture, in a user message after the tool results.
func TestReadFileImageReachesModel(t *testing.T) {
	t.Parallel()
	small := pngFile(t, 20, 10, false)
	e := visionEnv(t, llmtest.Call("read_file", `{"path":"ui.png"}`), llmtest.Text("I see a blue bar."))
	e.writeWS("ui.png", string(small))
	r := e.run("", "run", "--json", "look at ui.png")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	roles, urls := imageParts(t, reqs[1])
	n := len(roles)
	if roles[n-2] != "tool" || roles[n-1] != "user" || len(urls[n-1]) != 1 || !strings.HasPrefix(urls[n-1][0], "data:image/png;base64,") {
		t.Fatalf("messages %v, images of the last %v", roles, urls[n-1])
	}
	if res := toolResults(reqs[1])["call_1"]; !strings.Contains(res, "ui.png is an image (PNG, 20×10 pixels)") {
		t.Errorf("tool result = %q", res)
	}
	// Events describe the image without carrying it.
	if strings.Contains(r.stdout, base64.StdEncoding.EncodeToString(small)[:40]) {
		t.Error("an event carries the image data")
	}
}
