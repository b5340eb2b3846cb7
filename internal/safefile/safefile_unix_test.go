//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test if f does not return in time: a read that blocks
// on a named pipe must not hang.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatal("the read blocked")
	}
}

func TestSpecialFilesAreRefusedAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "settings.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, kind string }{
		{fifo, "a named pipe"},
		{zero, "a character device"},
	} {
		within(t, 5*time.Second, func() {
			_, err := ReadFile(tt.path, 0)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tt.kind) {
				t.Errorf("%s: err = %v, want not a regular file (%s)", tt.path, err, tt.kind)
			}
		})
		within(t, 5*time.Second, func() {
			if _, err := ReadFS(os.DirFS(dir), filepath.Base(tt.path), 0); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFS %s: err = %v", tt.path, err)
			}
		})
	}
}
