package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

type imgBackend struct {
	*fakeBackend
	root  string
	mu    sync.Mutex
	input string
	paths []string
}

func (b *imgBackend) Workspace() string { return b.root }

func (b *imgBackend) RunImages(ctx context.Context, sid, input string, paths []string, sink func(protocol.Event)) error {
	b.mu.Lock()
	b.input, b.paths = input, paths
	b.mu.Unlock()
	return nil
}

func TestImageMentions(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"shot.png", "docs/diagram.JPG", "notes.txt"} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	outside := filepath.Join(t.TempDir(), "o.png")
	os.WriteFile(outside, []byte("x"), 0o644)
	paths, refused := imageMentions(root, "see @shot.png, and @docs/diagram.JPG @shot.png @notes.txt @missing.png @"+outside)
	if strings.Join(paths, " ") != "shot.png docs/diagram.JPG" {
		t.Errorf("paths = %q", paths)
	}
	if len(refused) != 1 || !strings.Contains(refused[0], "outside the workspace") {
		t.Errorf("refused = %q", refused)
	}
}

func TestImageSentWithTurn(t *testing.T) {
	h := newHarness(t, 100, 24)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "shot.png"), []byte("x"), 0o644)
	ib := &imgBackend{fakeBackend: h.b, root: root}
	h.m.backend = ib
	h.typeLine("what is wrong in @shot.png?")
	for i := 0; i < 100; i++ {
		ib.mu.Lock()
		done := ib.input != ""
		ib.mu.Unlock()
		if done {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if ib.input != "what is wrong in @shot.png?" || strings.Join(ib.paths, ",") != "shot.png" {
		t.Errorf("RunImages got %q %q", ib.input, ib.paths)
	}
	if s := h.screen(); !strings.Contains(s, "attached image: shot.png") {
		t.Errorf("screen:\n%s", s)
	}
}
