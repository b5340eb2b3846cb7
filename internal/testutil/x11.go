//go:build unix

package testutil

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// X11Display starts a private X server (Xvfb) for the test and returns its
// display (":7"); the server is killed when the test ends. It skips the
// test, saying why, when Xvfb or xclip is missing (make test-deps installs
// both).
func X11Display(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"Xvfb", "xclip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install xvfb xclip); skipping the X11 clipboard test", tool)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// -displayfd 3: Xvfb picks a free display and writes its number there.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-nolisten", "tcp", "-screen", "0", "320x240x24")
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatalf("Xvfb did not start: %s", stderr.String())
		}
		return ":" + n
	case <-time.After(15 * time.Second):
		t.Fatalf("Xvfb did not start within 15 s: %s", stderr.String())
	}
	return ""
}

// SetClipboard puts data of type mime on the CLIPBOARD selection of
// display, as a program copying it would: an xclip process owns the
// selection until the test ends. It returns once the clipboard offers the
// type.
func SetClipboard(t testing.TB, display, mime string, data []byte) {
	t.Helper()
	cmd := exec.Command("xclip", "-quiet", "-selection", "clipboard", "-t", mime, "-i")
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	cmd.Stdin = bytes.NewReader(data)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start xclip: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; {
		q := exec.Command("xclip", "-selection", "clipboard", "-t", "TARGETS", "-o")
		q.Env = append(os.Environ(), "DISPLAY="+display)
		if targets, err := q.Output(); err == nil && bytes.Contains(targets, []byte(mime)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the clipboard of %s never offered %s (xclip: %s)", display, mime, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
