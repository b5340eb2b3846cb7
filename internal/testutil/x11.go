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
	// A server that names its display but takes no client (seen once
	// while other test processes started and killed servers of their
	// own) is replaced by another.
	var why string
	for range 3 {
		display, stop := startXvfb(t)
		if why = reachable(display); why == "" {
			t.Cleanup(stop)
			return display
		}
		stop()
		t.Logf("Xvfb on %s takes no client (%s); starting another", display, why)
	}
	t.Fatalf("no Xvfb took a client: %s", why)
	return ""
}

// reachable waits up to 5 s for a client to open display; it returns
// xclip's complaint when none could.
func reachable(display string) string {
	var out []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		q := exec.Command("xclip", "-selection", "clipboard", "-t", "TARGETS", "-o")
		q.Env = append(os.Environ(), "DISPLAY="+display)
		out, _ = q.CombinedOutput()
		if !bytes.Contains(out, []byte("Can't open display")) {
			return ""
		}
	}
	return strings.TrimSpace(string(out))
}

// startXvfb starts one Xvfb on a display it picks and returns the display
// and the function that kills it.
func startXvfb(t testing.TB) (string, func()) {
	t.Helper()
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
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			stop()
			t.Fatalf("Xvfb did not start: %s", stderr.String())
		}
		return ":" + n, stop
	case <-time.After(15 * time.Second):
		stop()
		t.Fatalf("Xvfb did not start within 15 s: %s", stderr.String())
	}
	return "", stop
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
