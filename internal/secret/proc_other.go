//go:build !unix

package secret

import "os/exec"

// setProcessGroup leaves cmd as it is: without process groups, cancelling
// kills the helper itself (exec's default).
func setProcessGroup(cmd *exec.Cmd) {}
