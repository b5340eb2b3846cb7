package builtin

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mx-claw/mx-claw/internal/images"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// readImage is read_file of an image: the picture itself for a model that
// reads images (scaled down when huge), a clear refusal for one that does
// not. ok is false for data that only starts like an image: read_file
// then treats it as any binary file.
func readImage(env *tools.Env, f *os.File, rel string, size int64) (res tools.Result, ok bool, err error) {
	if size > images.MaxInputBytes {
		return tools.Result{}, true, fmt.Errorf("%s is an image of %s, larger than the %s read_file reads", rel, humanSize(size), humanSize(images.MaxInputBytes))
	}
	data := make([]byte, size)
	if _, err := f.ReadAt(data, 0); err != nil && err != io.EOF {
		return tools.Result{}, true, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
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
	if len(img.Data) != len(data) {
		note = fmt.Sprintf(", scaled down from %s", humanSize(size))
	}
	return tools.Result{
		Content: fmt.Sprintf("%s is an image (%s, %d×%d pixels%s); it is attached for you to look at.", rel, format, img.Width, img.Height, note),
		Images:  []protocol.Image{img},
	}, true, nil
}
