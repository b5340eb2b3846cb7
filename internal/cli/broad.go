package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// broadWorkspace says why ws is too broad a workspace to start in without
// a word — the root or the user's home holds far more than one project,
// all of it then in the agent's reach — or "" if it is not.
func broadWorkspace(ws string) string {
	if ws == string(filepath.Separator) {
		return "the root directory"
	}
	if h, err := os.UserHomeDir(); err == nil {
		if real, err := filepath.EvalSymlinks(h); err == nil && real == ws {
			return "your home directory"
		}
	}
	return ""
}

// confirmBroad asks, before the REPL starts in a broad workspace, whether
// to go on; only "y" or "yes" does.
func confirmBroad(in io.Reader, out io.Writer, ws, what string) bool {
	fmt.Fprintf(out, "mx-claw is starting in %s (%s): the agent can read, and with your approval change, every file under it.\n", what, ws)
	fmt.Fprint(out, "Start here anyway? Better: cd into a project first. [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
