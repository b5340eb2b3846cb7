//go:build unix && !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// runHelper sets the limits and execs the command (sandbox-exec for the
// seatbelt backend). It returns only on failure.
func runHelper(s helperSpec) error {
	path, err := exec.LookPath(s.Argv[0])
	if err != nil {
		return fmt.Errorf("find %s: %v", s.Argv[0], err)
	}
	if err := setLimits(s.Limits, s.NprocRlimit, true); err != nil {
		return err
	}
	err = syscall.Exec(path, s.Argv, os.Environ())
	return fmt.Errorf("exec %s: %v", s.Argv[0], err)
}
