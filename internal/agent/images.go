package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// omittedImages replaces the images of a message sent to a model that
// does not read them.
const omittedImages = "[%d image(s) left out: the current model does not read images]"

// readsImages reports whether a model reads images, as the catalog (with
// the user's modelSettings) says.
func (c *Core) readsImages(modelID string) bool {
	return c.opts.Catalog != nil && c.opts.Catalog(modelID).Images
}

// readsImages reports whether the turn's model reads images.
func (t *turn) readsImages() bool { return t.core.readsImages(t.model.ID) }

// checkImages refuses a turn with images for a model that does not read
// them, before anything is stored.
func (c *Core) checkImages(ctx context.Context, req TurnRequest) error {
	if len(req.Images) == 0 {
		return nil
	}
	modelID := req.Model
	if modelID == "" {
		sess, err := c.opts.Store.GetSession(ctx, req.SessionID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: %s", ErrSessionNotFound, req.SessionID)
		}
		if err != nil {
			return err
		}
		modelID = sess.Model
	}
	return c.CheckImages(modelID)
}

// CheckImages returns the error that refuses images for a model
// ("provider/model", or "" for the default) that does not read them, and
// nil for one that does.
func (c *Core) CheckImages(modelID string) error {
	if m, err := c.opts.Models(modelID); err == nil {
		modelID = m.ID
	}
	if !c.readsImages(modelID) {
		return &ConfigError{Err: fmt.Errorf("the model %s does not accept images, so the message was not sent; "+
			"send it without images, switch to a model that reads them, or, if this one does, "+
			"set \"images\": true for it under \"modelSettings\" in config.json", modelID)}
	}
	return nil
}

// viewForModel returns view as the turn's model may receive it: as it is
// for a model that reads images, else with every image replaced by a
// note (the session may have switched from a model that read them).
func (t *turn) viewForModel(view []llm.Message) []llm.Message {
	if t.readsImages() {
		return view
	}
	var out []llm.Message
	for i := range view {
		if len(view[i].Images) == 0 {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), view...)
		}
		m := &out[i]
		m.Content += "\n" + fmt.Sprintf(omittedImages, len(m.Images))
		m.Images = nil
	}
	if out == nil {
		return view
	}
	return out
}

// llmImages converts stored images to their request form.
func llmImages(imgs []protocol.Image) []llm.Image {
	if len(imgs) == 0 {
		return nil
	}
	out := make([]llm.Image, len(imgs))
	for i, img := range imgs {
		out[i] = llm.Image{MIME: img.MIME, Data: img.Data}
	}
	return out
}
