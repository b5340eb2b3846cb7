package builtin

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/mx-claw/mx-claw/internal/images"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// readImage is read_file of an image: the picture itself for a model that
// reads images (scaled down when huge), a clear refusal for one that does
// not. head is the start of the file, already read; rest reads the
// remainder. ok is false for data that only starts like an image:
// read_file then treats it as any binary file.
func readImage(env *tools.Env, head []byte, rest io.Reader, rel string, size int64) (res tools.Result, ok bool, err error) {
	if size > images.MaxInputBytes {
		return tools.Result{}, true, fmt.Errorf("%s is an image of %s, larger than the %s read_file reads", rel, humanSize(size), humanSize(images.MaxInputBytes))
	}
	tail, err := io.ReadAll(io.LimitReader(rest, images.MaxInputBytes))
	if err != nil {
		return tools.Result{}, true, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
	data := append(head[:len(head):len(head)], tail...)
	img, err := images.Prepare(data)
	if err != nil {
		return tools.Result{}, false, nil
	}
	format := strings.ToUpper(strings.TrimPrefix(img.MIME, "image/"))
	if !env.Images {
		return tools.Result{}, true, fmt.Errorf("%s is an image (%s, %s); the current model does not read images, so read_file cannot show it", rel, format, humanSize(size))
	}
	img.Name = rel
	note := ""
	if img.Data != base64.StdEncoding.EncodeToString(data) {
		note = fmt.Sprintf(", scaled down from %s", humanSize(size))
	}
	return tools.Result{
		Content: fmt.Sprintf("%s is an image (%s, %d×%d pixels%s); it is attached for you to look at.", rel, format, img.Width, img.Height, note),
		Images:  []protocol.Image{img},
	}, true, nil
}
