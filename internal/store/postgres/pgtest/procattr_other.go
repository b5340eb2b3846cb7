//go:build unix && !linux

package pgtest

import "syscall"

// serverProcAttr runs the server as cred, in a process group of its own.
// Without a parent-death signal here, a server whose test process was
// killed keeps running until stopped by hand.
func serverProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
