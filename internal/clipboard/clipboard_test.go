package clipboard

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/testutil"
)

// pngHead is the start of every PNG file.
var pngHead = []byte("\x89PNG\r\n\x1a\n")

// fakeTools writes shell scripts standing in for the clipboard tools into
// a directory and returns a LookPath that finds only them.
func fakeTools(t *testing.T, scripts map[string]string) func(string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(name string) (string, error) {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return "", exec.ErrNotFound
		}
		return p, nil
	}
}

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestReaderImage(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the stand-in tools")
	}
	t.Parallel()
	hexPNG := strings.ToUpper(hex.EncodeToString(append(pngHead, "rest"...)))
	cases := []struct {
		name    string
		os      string
		env     []string
		tools   map[string]string
		want    string // the data read, or
		wantErr error  // the error matched
		errHas  string
	}{
		{name: "wayland png", os: "linux", env: []string{"WAYLAND_DISPLAY", "wayland-0", "DISPLAY", ":0"},
			tools: map[string]string{
				"wl-paste": `case "$*" in "--list-types") printf 'text/plain\nimage/jpeg\nimage/png\n';; "--no-newline --type image/png") printf PNGDATA;; *) exit 9;; esac`,
				"xclip":    `exit 7`},
			want: "PNGDATA"},
		{name: "x11 jpeg when no png", os: "linux", env: []string{"DISPLAY", ":0"},
			tools: map[string]string{"xclip": `case "$*" in *TARGETS*) printf 'TARGETS\nimage/jpeg\n';; *"-t image/jpeg -o") printf JPEGDATA;; *) exit 9;; esac`},
			want:  "JPEGDATA"},
		{name: "x11 text only", os: "linux", env: []string{"DISPLAY", ":0"},
			tools:   map[string]string{"xclip": `printf 'TARGETS\nUTF8_STRING\ntext/plain\n'`},
			wantErr: ErrNoImage},
		{name: "x11 empty clipboard", os: "linux", env: []string{"DISPLAY", ":0"},
			tools:   map[string]string{"xclip": `echo 'Error: target TARGETS not available' >&2; exit 1`},
			wantErr: ErrNoImage, errHas: "TARGETS not available"},
		{name: "x11 without xclip", os: "linux", env: []string{"DISPLAY", ":0"},
			wantErr: ErrNoTool, errHas: "install xclip"},
		{name: "wayland without wl-paste", os: "linux", env: []string{"WAYLAND_DISPLAY", "wayland-0"},
			wantErr: ErrNoTool, errHas: "wl-clipboard"},
		{name: "no display", os: "linux", tools: map[string]string{"xclip": "exit 0", "wl-paste": "exit 0"},
			wantErr: ErrNoTool, errHas: "no graphical session"},
		{name: "macOS pngpaste", os: "darwin",
			tools: map[string]string{"pngpaste": `[ "$1" = - ] && printf PNGDATA`, "osascript": "exit 9"},
			want:  "PNGDATA"},
		{name: "macOS pngpaste without picture", os: "darwin",
			tools:   map[string]string{"pngpaste": `echo 'No PNG data found on the clipboard!' >&2; exit 1`},
			wantErr: ErrNoImage},
		{name: "macOS osascript", os: "darwin",
			tools: map[string]string{"osascript": `[ "$2" = "the clipboard as «class PNGf»" ] && printf '«data PNGf` + hexPNG + `»\n'`},
			want:  string(pngHead) + "rest"},
		{name: "macOS osascript without picture", os: "darwin",
			tools:   map[string]string{"osascript": `echo "execution error: Can’t make some data into the expected type. (-1700)" >&2; exit 1`},
			wantErr: ErrNoImage},
		{name: "macOS without tools", os: "darwin", wantErr: ErrNoTool},
		{name: "windows", os: "windows", wantErr: ErrNoTool, errHas: "not supported on windows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Reader{OS: c.os, Getenv: env(c.env...), LookPath: fakeTools(t, c.tools)}
			img, err := r.Image(context.Background())
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want %v containing %q", err, c.wantErr, c.errHas)
				}
				return
			}
			if err != nil || string(img.Data) != c.want {
				t.Fatalf("Image = %q, %v; want %q", img.Data, err, c.want)
			}
		})
	}
}

// TestReaderTimeout: a tool that hangs ends the read at the time limit.
func TestReaderTimeout(t *testing.T) {
	t.Parallel()
	r := Reader{OS: "linux", Getenv: env("DISPLAY", ":0"), Timeout: 200 * time.Millisecond,
		LookPath: fakeTools(t, map[string]string{"xclip": "exec sleep 30"})}
	start := time.Now()
	_, err := r.Image(context.Background())
	if err == nil || !strings.Contains(err.Error(), "did not answer") || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
}

func TestAppleScriptData(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want, err string }{
		{in: "«data PNGf89504E47»\n", want: "\x89PNG"},
		{in: "«data TIFF4D4D»", want: "MM"},
		{in: "", err: "no picture data"},
		{in: "some text", err: "no picture data"},
		{in: "«data PNGfXYZ»", err: "not hex"},
	} {
		got, err := appleScriptData(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("appleScriptData(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("appleScriptData(%q) = %q, %v", c.in, got, err)
		}
	}
}

// TestX11Clipboard reads a PNG from the clipboard of a real X server with
// the real xclip.
func TestX11Clipboard(t *testing.T) {
	display := testutil.X11Display(t)
	r := Reader{OS: "linux", Getenv: env("DISPLAY", display)}
	if _, err := r.Image(context.Background()); !errors.Is(err, ErrNoImage) {
		t.Errorf("empty clipboard: err = %v, want ErrNoImage", err)
	}
	testutil.SetClipboard(t, display, "text/plain", []byte("just text"))
	if _, err := r.Image(context.Background()); !errors.Is(err, ErrNoImage) {
		t.Errorf("text on the clipboard: err = %v, want ErrNoImage", err)
	}
	data := append(append([]byte(nil), pngHead...), bytes.Repeat([]byte{0, 1, 2, 255}, 50_000)...)
	testutil.SetClipboard(t, display, "image/png", data)
	img, err := r.Image(context.Background())
	if err != nil || img.MIME != "image/png" || !bytes.Equal(img.Data, data) {
		t.Fatalf("Image = %s of %d bytes, %v; want the %d bytes put there", img.MIME, len(img.Data), err, len(data))
	}
}
