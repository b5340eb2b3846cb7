package clipboard

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// MaxBytes caps the picture read; a bigger one is refused (ErrTooLarge).
const MaxBytes = 64 << 20

// DefaultTimeout bounds each run of a clipboard tool.
const DefaultTimeout = 5 * time.Second

// Image is a picture read from the clipboard: the bytes of the file and
// their media type as the clipboard named it ("image/png").
type Image struct {
	Data []byte
	MIME string
}

// types are the media types taken from the clipboard, the preferred first.
var types = []string{"image/png", "image/jpeg", "image/webp", "image/gif"}

// Reader reads images from the system clipboard. The zero value reads the
// clipboard of this machine; the fields let tests choose the platform and
// environment.
type Reader struct {
	// OS is the platform, as runtime.GOOS names it; runtime.GOOS if "".
	OS string
	// Getenv looks up WAYLAND_DISPLAY and DISPLAY; os.Getenv if nil.
	// When set, the tools run with the values it gives them.
	Getenv func(string) string
	// LookPath finds a tool; exec.LookPath if nil.
	LookPath func(string) (string, error)
	// Timeout bounds each tool run; DefaultTimeout if zero.
	Timeout time.Duration
}

// Image returns the picture on the clipboard. It fails with ErrNoImage
// when there is none, ErrNoTool when the clipboard cannot be read here.
func (r Reader) Image(ctx context.Context) (Image, error) {
	switch r.os() {
	case "darwin":
		return r.darwin(ctx)
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return r.unix(ctx)
	}
	return Image{}, fmt.Errorf("%w: reading images from the clipboard is not supported on %s", ErrNoTool, r.os())
}

// unix reads the clipboard of a Wayland or X11 session.
func (r Reader) unix(ctx context.Context) (Image, error) {
	var list, get func(t string) []string
	var tool string
	switch {
	case r.getenv("WAYLAND_DISPLAY") != "" && r.has("wl-paste"):
		tool = "wl-paste"
		list = func(string) []string { return []string{"--list-types"} }
		get = func(t string) []string { return []string{"--no-newline", "--type", t} }
	case r.getenv("DISPLAY") != "" && r.has("xclip"):
		tool = "xclip"
		list = func(string) []string { return []string{"-selection", "clipboard", "-t", "TARGETS", "-o"} }
		get = func(t string) []string { return []string{"-selection", "clipboard", "-t", t, "-o"} }
	case r.getenv("WAYLAND_DISPLAY") != "":
		return Image{}, fmt.Errorf("%w: install wl-clipboard (wl-paste) to paste images", ErrNoTool)
	case r.getenv("DISPLAY") != "":
		return Image{}, fmt.Errorf("%w: install xclip to paste images", ErrNoTool)
	default:
		return Image{}, fmt.Errorf("%w: no graphical session (neither WAYLAND_DISPLAY nor DISPLAY is set)", ErrNoTool)
	}
	offered, err := r.run(ctx, tool, list("")...)
	if err != nil {
		// An empty clipboard makes both tools fail ("Nothing is copied",
		// "target TARGETS not available").
		return Image{}, fmt.Errorf("%w (%s: %v)", ErrNoImage, tool, err)
	}
	t := pickType(string(offered))
	if t == "" {
		return Image{}, ErrNoImage
	}
	data, err := r.run(ctx, tool, get(t)...)
	if err != nil {
		return Image{}, err
	}
	if len(data) == 0 {
		return Image{}, ErrNoImage
	}
	return Image{Data: data, MIME: t}, nil
}

// darwin reads the macOS pasteboard: with pngpaste when it is installed,
// else through AppleScript, which returns the PNG as hex digits.
func (r Reader) darwin(ctx context.Context) (Image, error) {
	if r.has("pngpaste") {
		data, err := r.run(ctx, "pngpaste", "-")
		if err != nil || len(data) == 0 {
			// pngpaste fails with "No PNG data found on the clipboard!".
			return Image{}, fmt.Errorf("%w (pngpaste: %v)", ErrNoImage, err)
		}
		return Image{Data: data, MIME: "image/png"}, nil
	}
	if !r.has("osascript") {
		return Image{}, fmt.Errorf("%w: neither pngpaste nor osascript is there", ErrNoTool)
	}
	out, err := r.run(ctx, "osascript", "-e", "the clipboard as «class PNGf»")
	if err != nil {
		// "Can’t make some data into the expected type." when no picture.
		return Image{}, fmt.Errorf("%w (osascript: %v)", ErrNoImage, err)
	}
	data, err := appleScriptData(string(out))
	if err != nil {
		return Image{}, err
	}
	return Image{Data: data, MIME: "image/png"}, nil
}

// appleScriptData decodes the way AppleScript prints raw data:
// «data PNGf89504E47…».
func appleScriptData(out string) ([]byte, error) {
	s := strings.TrimSpace(out)
	s, ok := strings.CutPrefix(s, "«data ")
	if !ok || !strings.HasSuffix(s, "»") || len(s) < 4 {
		return nil, fmt.Errorf("%w (osascript printed no picture data)", ErrNoImage)
	}
	s = strings.TrimSuffix(s[4:], "»") // the four-letter type, then hex
	data, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("osascript printed data that is not hex: %w", err)
	}
	return data, nil
}

// pickType chooses the preferred picture type among the offered ones (one
// a line), or "".
func pickType(offered string) string {
	have := map[string]bool{}
	for _, l := range strings.Split(offered, "\n") {
		have[strings.ToLower(strings.TrimSpace(l))] = true
	}
	for _, t := range types {
		if have[t] {
			return t
		}
	}
	return ""
}

// run runs a tool and returns what it printed, at most MaxBytes.
func (r Reader) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, err := r.lookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTool, err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	if r.Getenv != nil {
		cmd.Env = os.Environ()
		for _, k := range []string{"WAYLAND_DISPLAY", "DISPLAY"} {
			if v := r.Getenv(k); v != "" {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(stdout, MaxBytes+1))
	if len(data) > MaxBytes {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w (more than %d MiB)", ErrTooLarge, MaxBytes>>20)
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s did not answer within %v", name, timeout)
	case werr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, werr
		}
		return nil, errors.New(firstLine(msg))
	case rerr != nil:
		return nil, rerr
	}
	return data, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (r Reader) os() string {
	if r.OS != "" {
		return r.OS
	}
	return runtime.GOOS
}

func (r Reader) getenv(k string) string {
	if r.Getenv != nil {
		return r.Getenv(k)
	}
	return os.Getenv(k)
}

func (r Reader) lookPath(name string) (string, error) {
	if r.LookPath != nil {
		return r.LookPath(name)
	}
	return exec.LookPath(name)
}

func (r Reader) has(name string) bool {
	_, err := r.lookPath(name)
	return err == nil
}
