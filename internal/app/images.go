package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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

// Limits of the images a client sends with a prompt as data (the web
// panel, an ACP client), before they are scaled down.
const (
	MaxPromptImages     = 4
	MaxPromptImageBytes = 8 << 20
)

// ErrImageTooLarge is matched by the error for an image sent as data that
// is over MaxPromptImageBytes.
var ErrImageTooLarge = errors.New("image too large")

// DecodeImages prepares the images a client sent with a prompt, each
// base64 data (Data; MIME is ignored, the data says what it is), checked
// and scaled down like a file's. A bad one is an error naming it (by Name,
// else by its place); more than MaxPromptImages is an error too.
func DecodeImages(in []protocol.Image) ([]protocol.Image, error) {
	if len(in) > MaxPromptImages {
		return nil, fmt.Errorf("%d images: at most %d go with one message", len(in), MaxPromptImages)
	}
	out := make([]protocol.Image, 0, len(in))
	for i, img := range in {
		name := strings.TrimSpace(filepath.Base(filepath.ToSlash(img.Name)))
		if len(name) > 200 || name == "." || name == "/" {
			name = ""
		}
		what := name
		if what == "" {
			what = fmt.Sprintf("image %d", i+1)
		}
		if base64.StdEncoding.DecodedLen(len(img.Data)) > MaxPromptImageBytes+3 {
			return nil, fmt.Errorf("%s: %w: more than %d MiB", what, ErrImageTooLarge, MaxPromptImageBytes>>20)
		}
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: the data is not base64: %v", what, err)
		}
		if len(data) > MaxPromptImageBytes {
			return nil, fmt.Errorf("%s: %w: more than %d MiB", what, ErrImageTooLarge, MaxPromptImageBytes>>20)
		}
		p, err := images.Prepare(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		p.Name = name
		out = append(out, p)
	}
	return out, nil
}

// ReadsImages reports whether the model new turns use reads images.
func (d *Driver) ReadsImages() bool { return d.a.Core.CheckImages(d.model) == nil }

// CheckImages returns the error that refuses images for the model of the
// session's next turn when that model does not read them, and nil when
// it does; ErrUnknownSession if there is no such session.
func (d *Driver) CheckImages(ctx context.Context, sessionID string) error {
	model := d.model
	if model == "" {
		sess, err := d.Session(ctx, sessionID)
		if err != nil {
			return err
		}
		model = sess.Model
	}
	return d.a.Core.CheckImages(model)
}
