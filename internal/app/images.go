package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/images"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// LoadImages reads image files to send with a prompt (--image, @shot.png),
// each scaled down when huge; a relative path is taken against base. A
// file that is not an image is an error naming it.
func LoadImages(base string, paths []string) ([]protocol.Image, error) {
	out := make([]protocol.Image, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) && base != "" {
			p = filepath.Join(base, p)
		}
		img, err := images.Load(p)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", p, err)
		}
		out = append(out, img)
	}
	return out, nil
}

// RunImages runs a turn whose message carries the image files at paths
// (relative to the workspace), like Run; a model that does not read images
// refuses it before anything is sent.
func (b *Backend) RunImages(ctx context.Context, sessionID, input string, paths []string, sink func(protocol.Event)) error {
	imgs, err := LoadImages(b.ws, paths)
	if err != nil {
		return err
	}
	b.mu.Lock()
	model := b.model
	b.mu.Unlock()
	b.noteRan(sessionID)
	return b.a.Core.Run(ctx, agent.TurnRequest{SessionID: sessionID, Input: input, Model: model, OnAsk: agent.AskWait,
		Budget: b.a.Budget(), Images: imgs}, sink)
}
