//go:build !linux

package execx

import "syscall"

// groupAttr puts a command into its own process group.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
