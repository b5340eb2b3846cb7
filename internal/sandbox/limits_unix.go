//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// setLimits sets the resource limits of this process (inherited by what
// it execs). as says whether to cap the address space too: the Go
// runtime reserves much of it, so that limit is set only right before an
// exec into something else. nproc says to cap processes with RLIMIT_NPROC: that limit
// counts every process of the user, so it is set to the user's current
// count plus the allowance.
func setLimits(l Limits, nproc, as bool) error {
	l = l.orDefault()
	set := func(what string, res int, v uint64) error {
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err == nil && cur.Max < v {
			v = cur.Max // never raise a hard limit (which would fail)
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("set the %s limit: %v", what, err)
		}
		return nil
	}
	if err := set("CPU time", unix.RLIMIT_CPU, uint64(l.CPUSeconds)); err != nil {
		return err
	}
	if as {
		if err := set("address space", unix.RLIMIT_AS, uint64(l.AddressSpaceMB)<<20); err != nil {
			return err
		}
	}
	if err := set("file size", unix.RLIMIT_FSIZE, uint64(l.FileSizeMB)<<20); err != nil {
		return err
	}
	if nproc {
		return set("process", unix.RLIMIT_NPROC, uint64(userProcesses()+int(l.Processes)))
	}
	return nil
}

// userProcesses counts the processes (and threads' tasks count as their
// process) of this user, from /proc where there is one.
func userProcesses() int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	uid := uint32(os.Getuid())
	n := 0
	for _, e := range entries {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid {
			n++
		}
	}
	return n
}
