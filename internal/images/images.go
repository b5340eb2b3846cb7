// Package images prepares pictures for models that read them: it checks
// that a file is an image (PNG, JPEG, GIF or WebP), and brings a huge one
// within the limits providers accept — at most MaxDimension pixels on its
// long side and MaxBytes encoded — by scaling it down and re-encoding it.
// A picture already within the limits is sent as it is.
//
// It is pure Go (image/png, image/jpeg, image/gif, golang.org/x/image's
// WebP decoder and its draw package for scaling), so the binary stays
// cgo-free.
//
// Who may import it: the tools (read_file), the app's wiring (images
// attached to a prompt), the terminal UI (telling a pasted image file by
// its content) and tests. It imports only protocol.
package images

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // registers the GIF decoder
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // registers the WebP decoder

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Limits of a prepared image. OpenAI scales anything larger than 2048
// pixels down itself and refuses files over 20 MB; staying well below
// keeps requests (which carry the image base64-encoded, in every request
// of the session) reasonable.
const (
	MaxDimension = 2048
	MaxBytes     = 3 << 20
)

// MaxInputBytes caps the file read: a bigger one is refused rather than
// decoded.
const MaxInputBytes = 64 << 20

// ErrNotImage is matched by the error for data that is not an image of a
// supported format.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// extensions are the file name extensions of the formats read.
var extensions = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp",
}

// IsImageName reports whether a file name has an image extension.
func IsImageName(name string) bool {
	_, ok := extensions[strings.ToLower(filepath.Ext(name))]
	return ok
}

// Sniff returns the media type of image data, or "" if it is no image of
// a supported format.
func Sniff(data []byte) string {
	if len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return "image/webp"
	}
	switch t := http.DetectContentType(data); t {
	case "image/png", "image/jpeg", "image/gif":
		return t
	}
	return ""
}

// Load reads an image file and prepares it (see Prepare).
func Load(path string) (protocol.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return protocol.Image{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return protocol.Image{}, err
	}
	if !fi.Mode().IsRegular() {
		return protocol.Image{}, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxInputBytes {
		return protocol.Image{}, fmt.Errorf("%s is %d MiB, more than the %d MiB an image may have", path, fi.Size()>>20, MaxInputBytes>>20)
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return protocol.Image{}, err
	}
	img, err := Prepare(data)
	if err != nil {
		return protocol.Image{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	img.Name = filepath.Base(path)
	return img, nil
}

// Prepare checks that data is an image and returns it within the limits:
// as it is when it is a PNG, JPEG, GIF or WebP of at most MaxDimension
// pixels a side and MaxBytes, else scaled down and re-encoded (PNG for
// pictures with transparency and for small ones, JPEG otherwise). The
// image's Data is the file in base64.
func Prepare(data []byte) (protocol.Image, error) {
	mime := Sniff(data)
	if mime == "" {
		return protocol.Image{}, ErrNotImage
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return protocol.Image{}, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return protocol.Image{}, fmt.Errorf("%w: it has no pixels", ErrNotImage)
	}
	// Refuse a decompression bomb before allocating its pixels.
	if int64(cfg.Width)*int64(cfg.Height) > 100_000_000 {
		return protocol.Image{}, fmt.Errorf("the image is %d×%d pixels, too large to read", cfg.Width, cfg.Height)
	}
	if len(data) <= MaxBytes && max(cfg.Width, cfg.Height) <= MaxDimension && mime != "image/webp" {
		return protocol.Image{MIME: mime, Data: base64.StdEncoding.EncodeToString(data), Width: cfg.Width, Height: cfg.Height}, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return protocol.Image{}, fmt.Errorf("%w: %v", ErrNotImage, err)
	}
	return shrink(src)
}

// shrink encodes src within the limits, scaling it down as far as needed.
func shrink(src image.Image) (protocol.Image, error) {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if long := max(w, h); long > MaxDimension {
		w, h = max(1, w*MaxDimension/long), max(1, h*MaxDimension/long)
	}
	alpha := !opaque(src)
	for {
		img := src
		if w != b.Dx() || h != b.Dy() {
			dst := image.NewRGBA(image.Rect(0, 0, w, h))
			xdraw.BiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
			img = dst
		}
		var buf bytes.Buffer
		mime := "image/png"
		if alpha || w*h <= 512*512 {
			if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
				return protocol.Image{}, err
			}
		}
		if buf.Len() == 0 || buf.Len() > MaxBytes && !alpha {
			buf.Reset()
			mime = "image/jpeg"
			if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
				return protocol.Image{}, err
			}
		}
		if buf.Len() <= MaxBytes || max(w, h) <= 64 {
			return protocol.Image{MIME: mime, Data: base64.StdEncoding.EncodeToString(buf.Bytes()), Width: w, Height: h}, nil
		}
		w, h = max(1, w*3/4), max(1, h*3/4)
	}
}

// opaque reports whether an image has no transparent pixel (cheaply: by
// its type, or by scanning an image that has an alpha channel).
func opaque(img image.Image) bool {
	if o, ok := img.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	switch img.(type) {
	case *image.YCbCr, *image.Gray, *image.Gray16, *image.CMYK:
		return true
	}
	return false
}
