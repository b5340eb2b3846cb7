package builtin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileImage(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 64, 48)))
	if err := os.WriteFile(filepath.Join(root, "shot.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := newReadFile()
	env.Images = true
	res, err := tool.Run(context.Background(), env, json.RawMessage(`{"path":"shot.png"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Images) != 1 || res.Images[0].MIME != "image/png" || res.Images[0].Data != base64.StdEncoding.EncodeToString(buf.Bytes()) ||
		!strings.Contains(res.Content, "shot.png is an image (PNG, 64×48 pixels)") {
		t.Errorf("result = %q, %d images", res.Content, len(res.Images))
	}
	env.Images = false
	_, err = tool.Run(context.Background(), env, json.RawMessage(`{"path":"shot.png"}`))
	if err == nil || !strings.Contains(err.Error(), "does not read images") {
		t.Errorf("text-only model: err = %v", err)
	}
}
