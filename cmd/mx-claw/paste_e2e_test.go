package main_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/testutil"
)

// lastUserImages returns the text and the image data URLs of the last
// message of the last request the fake model received.
func lastUserImages(t *testing.T, e *env) (text string, urls []string) {
	t.Helper()
	reqs := e.srv.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	req := reqs[len(reqs)-1]
	roles, all := imageParts(t, req)
	last := len(roles) - 1
	if roles[last] != "user" {
		t.Fatalf("the last message is a %s message", roles[last])
	}
	return req.Chat.Messages[last].Content, all[last]
}

// TestTUIPastedImagePath: a file dropped on the terminal arrives as a
// bracketed paste of its quoted path; it is attached as an image, shown
// as a placeholder, and sent to the model as an image part.
func TestTUIPastedImagePath(t *testing.T) {
	t.Parallel()
	e := visionEnv(t, llmtest.Text("A blue square."))
	small := pngFile(t, 16, 12, false)
	shot := filepath.Join(t.TempDir(), "Screen Shot.png")
	if err := os.WriteFile(shot, small, 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.startTUI()
	p.keys("-l", "what is on ")
	p.tmux("set-buffer", "-b", "drop", "--", "'"+shot+"' ")
	p.tmux("paste-buffer", "-p", "-b", "drop", "-t", "main") // -p: bracketed, as the terminal does
	p.waitFor("[Image #1 Screen Shot.png]", 10*time.Second)
	p.keys("-l", "?")
	p.keys("Enter")
	s := p.waitFor("A blue square.", 20*time.Second)
	if !strings.Contains(s, "attached image: [Image #1 Screen Shot.png]") {
		t.Errorf("screen:\n%s", s)
	}
	text, urls := lastUserImages(t, e)
	if text != "what is on [Image #1 Screen Shot.png] ?" {
		t.Errorf("text part = %q", text)
	}
	if len(urls) != 1 || urls[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
		t.Errorf("image parts: %d, %.60q", len(urls), urls)
	}
}

// TestTUIClipboardImage: Ctrl+V attaches the picture on a real X11
// clipboard (Xvfb, owned by xclip), kept with the session's data.
func TestTUIClipboardImage(t *testing.T) {
	t.Parallel()
	display := testutil.X11Display(t)
	small := pngFile(t, 20, 10, false)
	testutil.SetClipboard(t, display, "image/png", small)
	e := visionEnv(t, llmtest.Text("A blue bar."))
	p := e.startTUIWith([]string{"DISPLAY=" + display}, "│ ")
	p.keys("-l", "what is this? ")
	p.keys("C-v")
	p.waitFor("[Image #1 clipboard.png]", 10*time.Second)
	p.keys("Enter")
	p.waitFor("A blue bar.", 20*time.Second)
	text, urls := lastUserImages(t, e)
	if text != "what is this? [Image #1 clipboard.png]" {
		t.Errorf("text part = %q", text)
	}
	if len(urls) != 1 || urls[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
		t.Errorf("image parts: %d, %.60q", len(urls), urls)
	}
	saved, _ := filepath.Glob(filepath.Join(e.home, "pasted", "*", "clipboard-*.png"))
	if len(saved) != 1 {
		t.Errorf("pasted pictures under the home: %q", saved)
	}
}
