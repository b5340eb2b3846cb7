package pgtest

import "syscall"

// serverProcAttr runs the server as cred, in a process group of its own;
// it dies with this process if that is killed before Stop.
func serverProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
}
