package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// imageBackend is a Backend that sends images with a message, for models
// that read them (@shot.png).
type imageBackend interface {
	// RunImages is Run with the image files at paths (relative to the
	// workspace) attached to input.
	RunImages(ctx context.Context, sessionID, input string, paths []string, sink func(protocol.Event)) error
}

// imageExts are the file name extensions sent as images.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// isImagePath reports whether an @path names an image by its extension.
func isImagePath(p string) bool {
	return imageExts[strings.ToLower(filepath.Ext(strings.TrimRight(p, ",.;:!?)]}'\"")))]
}

// imageMentions returns the @path words of text that name image files of
// the workspace (relative paths, with slashes), each once, and a note for
// each one refused.
func imageMentions(root, text string) (paths, refused []string) {
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		typed, ok := strings.CutPrefix(w, "@")
		if !ok || !isImagePath(typed) {
			continue
		}
		typed = strings.TrimRight(typed, ",.;:!?)]}'\"")
		full := filepath.Join(root, filepath.FromSlash(typed))
		real, err := filepath.EvalSymlinks(full)
		realRoot, rerr := filepath.EvalSymlinks(root)
		switch {
		case filepath.IsAbs(typed) || err == nil && rerr == nil && !inside(realRoot, real) || !inside(root, full):
			refused = append(refused, fmt.Sprintf("not attached: %s (outside the workspace)", typed))
			continue
		case errors.Is(err, os.ErrNotExist):
			continue // not a path: an ordinary word
		case err != nil:
			refused = append(refused, fmt.Sprintf("not attached: %s (%v)", typed, err))
			continue
		}
		if !seen[typed] {
			seen[typed] = true
			paths = append(paths, typed)
		}
	}
	return paths, refused
}

// printImages lists the images attached to a message.
func (m *Model) printImages(paths []string) {
	for _, p := range paths {
		m.print(m.th.dim.Render(oneLine("  attached image: "+clean(p), m.width)))
	}
}

// runTurn runs a turn, with images when there are any.
func runTurn(ctx context.Context, b Backend, sessionID, input string, imgs []string, sink func(protocol.Event)) error {
	if len(imgs) == 0 {
		return b.Run(ctx, sessionID, input, sink)
	}
	ib, ok := b.(imageBackend)
	if !ok {
		return errors.New("images cannot be sent from here; the message was not sent")
	}
	return ib.RunImages(ctx, sessionID, input, imgs, sink)
}
