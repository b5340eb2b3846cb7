package acp

import (
	"context"
	"errors"
	"net/url"
	"path"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Images in prompts. initialize says promptCapabilities.image is true when
// the model new sessions use reads images (the catalog, or modelSettings'
// "images"), so a client offers to attach them only then. An image block
// ({"type": "image", "data": BASE64, "mimeType", "uri"?}) is checked and
// scaled down as `run --image` does (at most app.MaxPromptImages, each at
// most app.MaxPromptImageBytes) and goes with the prompt's text. A session
// whose model does not read images refuses such a prompt with the reason
// and what to do (invalid params), before anything is stored or sent.

// promptContent returns a prompt's text and its images, ready for the
// session's model.
func (s *server) promptContent(ctx context.Context, sessionID string, blocks []contentBlock) (string, []protocol.Image, error) {
	text, raw, err := promptText(blocks)
	if err != nil || len(raw) == 0 {
		return text, nil, err
	}
	imgs, err := app.DecodeImages(raw)
	if err != nil {
		return "", nil, jsonrpc.InvalidParams("%v", err)
	}
	if err := s.d.CheckImages(ctx, sessionID); err != nil {
		if errors.Is(err, app.ErrUnknownSession) {
			return "", nil, err
		}
		return "", nil, jsonrpc.InvalidParams("%v", err)
	}
	return text, imgs, nil
}

// imageName is the file name in an image block's URI, if it has one.
func imageName(uri string) string {
	if uri == "" {
		return ""
	}
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		return path.Base(u.Path)
	}
	return ""
}
