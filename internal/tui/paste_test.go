package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/clipboard"
)

// pasteBackend is an imgBackend that keeps pasted pictures in a directory.
type pasteBackend struct {
	*imgBackend
	dir string
}

func (b *pasteBackend) PastedImageDir(sid string) string { return filepath.Join(b.dir, sid) }

// pasteHarness is a harness whose Backend takes images, with a workspace.
func pasteHarness(t *testing.T) (*harness, *pasteBackend) {
	h := newHarness(t, 100, 24)
	pb := &pasteBackend{imgBackend: &imgBackend{fakeBackend: h.b, root: t.TempDir()}, dir: t.TempDir()}
	h.m.backend = pb
	return h, pb
}

// sent waits for the turn and returns what RunImages got ("" if Run got
// the message instead).
func (b *imgBackend) sent(t *testing.T) (string, []string) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b.mu.Lock()
		input, paths := b.input, b.paths
		b.mu.Unlock()
		if input != "" {
			return input, paths
		}
	}
	return "", nil
}

func ctrlV() tea.KeyPressMsg { return tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl} }

// TestPastedImagePathSent: a file dropped on the terminal (a bracketed
// paste of its quoted path) becomes a placeholder, and the message carries
// the image.
func TestPastedImagePathSent(t *testing.T) {
	h, pb := pasteHarness(t)
	shot := filepath.Join(t.TempDir(), "my shot.png")
	os.WriteFile(shot, pngBytes, 0o644)
	h.m.input.SetValue("what is wrong here? ")
	h.send(tea.PasteMsg{Content: "'" + shot + "' "})
	if got := h.m.input.Value(); got != "what is wrong here? [Image #1 my shot.png] " {
		t.Fatalf("input = %q", got)
	}
	h.key("enter")
	input, paths := pb.sent(t)
	if input != "what is wrong here? [Image #1 my shot.png]" || len(paths) != 1 || paths[0] != shot {
		t.Fatalf("RunImages got %q %q", input, paths)
	}
	if s := h.screen(); !strings.Contains(s, "attached image: [Image #1 my shot.png]") {
		t.Errorf("screen:\n%s", s)
	}
}

// TestPastedTextStaysText: a path to a file that is no image, a missing
// one and prose are pasted as they are.
func TestPastedTextStaysText(t *testing.T) {
	h, pb := pasteHarness(t)
	notes := filepath.Join(pb.root, "notes.txt")
	os.WriteFile(notes, []byte("text"), 0o644)
	paste := notes + " " + filepath.Join(pb.root, "missing.png")
	h.send(tea.PasteMsg{Content: paste})
	if got := h.m.input.Value(); got != paste {
		t.Fatalf("input = %q, want the paste", got)
	}
	if len(h.m.paste.images) != 0 {
		t.Errorf("images attached: %+v", h.m.paste.images)
	}
}

// TestPlaceholderDeletedWhole: Backspace after a placeholder deletes it at
// once, and a message without it carries no image.
func TestPlaceholderDeletedWhole(t *testing.T) {
	h, _ := pasteHarness(t)
	shot := filepath.Join(t.TempDir(), "shot.png")
	os.WriteFile(shot, pngBytes, 0o644)
	h.m.input.SetValue("see ")
	h.send(tea.PasteMsg{Content: shot})
	h.send(tea.KeyPressMsg{Code: tea.KeyBackspace}) // the space after it
	h.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if got := h.m.input.Value(); got != "see " {
		t.Fatalf("input = %q", got)
	}
	h.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if got := h.m.input.Value(); got != "see" {
		t.Fatalf("input = %q after a plain backspace", got)
	}
	h.key(" it")
	h.key("enter")
	if runs := h.b.waitRuns(1); len(runs) != 1 || runs[0] != "see it" {
		t.Fatalf("runs = %q", runs)
	}
}

// TestCtrlVPastesClipboardImage: Ctrl+V saves the clipboard's picture in
// the session's directory and attaches it.
func TestCtrlVPastesClipboardImage(t *testing.T) {
	h, pb := pasteHarness(t)
	h.m.paste.read = func(context.Context) (clipboard.Image, error) {
		return clipboard.Image{Data: pngBytes, MIME: "image/png"}, nil
	}
	h.m.input.SetValue("what is this? ")
	h.send(ctrlV())
	if got := h.m.input.Value(); got != "what is this? [Image #1 clipboard.png] " {
		t.Fatalf("input = %q", got)
	}
	h.key("enter")
	input, paths := pb.sent(t)
	if input != "what is this? [Image #1 clipboard.png]" || len(paths) != 1 {
		t.Fatalf("RunImages got %q %q", input, paths)
	}
	if dir := filepath.Join(pb.dir, h.m.sess.ID); filepath.Dir(paths[0]) != dir || !strings.HasSuffix(paths[0], ".png") {
		t.Errorf("saved as %s, not a .png in %s", paths[0], dir)
	}
	if data, err := os.ReadFile(paths[0]); err != nil || string(data) != string(pngBytes) {
		t.Errorf("saved file: %q, %v", data, err)
	}
}

// TestClipboardWithoutImage: with no picture Ctrl+V pastes text as before
// and says nothing; without a clipboard tool it says why, once; an empty
// paste (a terminal's own paste key) reads the clipboard too.
func TestClipboardWithoutImage(t *testing.T) {
	h, _ := pasteHarness(t)
	var err error
	reads := 0
	h.m.paste.read = func(context.Context) (clipboard.Image, error) { reads++; return clipboard.Image{}, err }

	err = clipboard.ErrNoImage
	h.send(ctrlV())
	err = fmt.Errorf("%w: install xclip to paste images", clipboard.ErrNoTool)
	h.send(ctrlV())
	h.send(ctrlV())
	if s := h.screen(); strings.Count(s, "install xclip") != 1 {
		t.Errorf("the hint is not shown once:\n%s", s)
	}
	err = errors.New("xclip did not answer within 5s")
	h.send(tea.PasteMsg{Content: ""})
	if reads != 4 {
		t.Errorf("the clipboard was read %d times, want 4", reads)
	}
	if s := h.screen(); !strings.Contains(s, "not pasted: xclip did not answer") {
		t.Errorf("screen:\n%s", s)
	}
	if len(h.m.paste.images) != 0 || strings.Contains(h.m.input.Value(), "[Image") {
		t.Errorf("an image was attached: %q", h.m.input.Value())
	}
}

// TestClipboardNotAnImage: data on the clipboard that is no picture of a
// format sent is not saved.
func TestClipboardNotAnImage(t *testing.T) {
	h, pb := pasteHarness(t)
	h.m.paste.read = func(context.Context) (clipboard.Image, error) {
		return clipboard.Image{Data: []byte("BM not a bmp we read"), MIME: "image/png"}, nil
	}
	h.send(ctrlV())
	if len(h.m.paste.images) != 0 {
		t.Errorf("attached %+v", h.m.paste.images)
	}
	if entries, _ := os.ReadDir(pb.dir); len(entries) != 0 {
		t.Errorf("saved %v", entries)
	}
}

func TestHelpTellsOfPastedImages(t *testing.T) {
	h := newHarness(t, 100, 60)
	h.typeLine("/help")
	if s := h.screen(); !strings.Contains(s, "Ctrl+V pastes a picture from the clipboard") || !strings.Contains(s, "[Image #1 name.png]") {
		t.Errorf("/help:\n%s", s)
	}
}
