//go:build unix

package ignore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A cloned repository's .gitignore can be a link to /dev/zero, and an
// unpacked archive's a named pipe: matching must neither hang nor read
// without end. Such a file has no patterns.
func TestSpecialGitignoreFiles(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	root := t.TempDir()
	for _, d := range []string{"zero", "fifo"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/dev/zero", filepath.Join(root, "zero", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo", ".gitignore"), 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	done := make(chan bool, 1)
	go func() {
		m := New(root)
		done <- m.Match("zero/a.log", false) || m.Match("fifo/a.log", false)
	}()
	select {
	case matched := <-done:
		if matched {
			t.Error("a special .gitignore gave patterns")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("matching blocked on a special .gitignore")
	}
}
