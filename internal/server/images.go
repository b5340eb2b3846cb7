package server

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Images sent with a message: POST /api/sessions/{id}/messages takes an
// optional "images" list beside "text", each {"data": BASE64, "name"?}
// (the file's bytes; PNG, JPEG, GIF or WebP). At most app.MaxPromptImages
// of at most app.MaxPromptImageBytes each; they are checked and scaled
// down as a file given to `run --image` is. A message with images for a
// model that does not read them is refused (400, with the hint that says
// what to do), and so is one that would have to wait in the queue behind
// a running turn (409): a queued message keeps only its text.

// maxMessageBody caps the body of a message: room for its images in
// base64, and the text.
const maxMessageBody = app.MaxPromptImages*(app.MaxPromptImageBytes/3*4+4096) + maxBody

// messageImages prepares a message's images.
func messageImages(in []protocol.Image) ([]protocol.Image, error) {
	if len(in) == 0 {
		return nil, nil
	}
	imgs, err := app.DecodeImages(in)
	if errors.Is(err, app.ErrImageTooLarge) {
		return nil, errorf(http.StatusRequestEntityTooLarge, protocol.CodeTooLarge, "%v", err)
	}
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return imgs, nil
}

// checkImages refuses images the session's next turn cannot take: the
// session is busy (the message would be queued), or its model does not
// read images. r.mu is held.
func (s *Server) checkImages(id string, r *runner, imgs []protocol.Image) error {
	if len(imgs) == 0 {
		return nil
	}
	if r.running {
		return errorf(http.StatusConflict, protocol.CodeSessionBusy,
			"session %s is busy, and a message with images cannot wait in the queue; send it when the turn ends", id)
	}
	sess, err := s.app.Store.GetSession(s.ctx, id)
	if err != nil {
		return err
	}
	if sess.Status == protocol.StatusWaitingForApproval {
		// The core would queue the text and leave the images out.
		return errorf(http.StatusConflict, protocol.CodeSessionBusy,
			"session %s waits for an approval, and a message with images cannot wait in the queue; answer it first", id)
	}
	if err := s.app.Core.CheckImages(cmp.Or(r.model, sess.Model)); err != nil {
		return badRequest("%v", err)
	}
	return nil
}
