package execx

import "syscall"

// groupAttr puts a command into its own process group whose leader dies
// with mx-claw (PR_SET_PDEATHSIG; bwrap's --die-with-parent does the same
// inside a sandbox).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
