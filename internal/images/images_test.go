package images

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// noisePNG encodes a w×h picture of random colours without compression,
// so that its file is as large as its pixels.
func noisePNG(t *testing.T, w, h int, alpha bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(img.Pix); i += 4 {
		v := r.Uint32()
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(v), byte(v>>8), byte(v>>16), 255
		if alpha {
			img.Pix[i+3] = byte(v >> 24)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPrepareKeepsSmallImage(t *testing.T) {
	t.Parallel()
	img := image.NewGray(image.Rect(0, 0, 40, 30))
	img.Set(3, 4, color.White)
	var buf bytes.Buffer
	png.Encode(&buf, img)
	got, err := Prepare(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got.MIME != "image/png" || got.Data != base64.StdEncoding.EncodeToString(buf.Bytes()) || got.Width != 40 || got.Height != 30 {
		t.Errorf("got %s %d×%d, %d bytes", got.MIME, got.Width, got.Height, len(got.Data))
	}
}

// TestPrepareDownscalesHugePNG: a 20 MB screenshot-sized PNG comes back
// within the limits, still a picture of the same shape.
func TestPrepareDownscalesHugePNG(t *testing.T) {
	t.Parallel()
	data := noisePNG(t, 3600, 2025, false)
	if len(data) < 20<<20 {
		t.Fatalf("test image is only %d bytes", len(data))
	}
	got, err := Prepare(data)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := base64.StdEncoding.DecodeString(got.Data)
	if len(out) > MaxBytes || max(got.Width, got.Height) > MaxDimension {
		t.Fatalf("prepared image: %d bytes, %d×%d", len(out), got.Width, got.Height)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(out))
	if err != nil || cfg.Width != got.Width || cfg.Height != got.Height || "image/"+format != got.MIME {
		t.Errorf("decodes as %s %d×%d (%v), reported %s %d×%d", format, cfg.Width, cfg.Height, err, got.MIME, got.Width, got.Height)
	}
	if r := float64(got.Width) / float64(got.Height); r < 1.7 || r > 1.85 {
		t.Errorf("aspect ratio %.2f, want 16:9", r)
	}
}

func TestPrepareTransparentStaysPNG(t *testing.T) {
	t.Parallel()
	got, err := Prepare(noisePNG(t, 2600, 400, true))
	if err != nil {
		t.Fatal(err)
	}
	if got.MIME != "image/png" || base64.StdEncoding.DecodedLen(len(got.Data)) > MaxBytes || got.Width > MaxDimension {
		t.Errorf("got %s %d×%d, %d bytes", got.MIME, got.Width, got.Height, len(got.Data))
	}
}

func TestPrepareRefusesOtherData(t *testing.T) {
	t.Parallel()
	for _, data := range [][]byte{[]byte("%PDF-1.7 not an image"), []byte("\x89PNG\r\n\x1a\ntruncated"), nil} {
		if _, err := Prepare(data); !errors.Is(err, ErrNotImage) {
			t.Errorf("Prepare(%.12q) = %v, want ErrNotImage", data, err)
		}
	}
}

func TestLoadAndNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "shot.PNG")
	if err := os.WriteFile(p, noisePNG(t, 10, 10, false), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := Load(p)
	if err != nil || img.Name != "shot.PNG" || img.Width != 10 {
		t.Errorf("Load = %+v, %v", img, err)
	}
	for name, want := range map[string]bool{"a.png": true, "b.JPEG": true, "c.webp": true, "d.gif": true, "e.svg": false, "f.go": false} {
		if IsImageName(name) != want {
			t.Errorf("IsImageName(%q) = %v", name, !want)
		}
	}
}
