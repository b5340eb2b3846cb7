//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether the process pid runs, by sending it signal
// 0. EPERM means it runs as another user; only ESRCH means it is gone. A
// zombie counts as running until its parent reaps it.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
