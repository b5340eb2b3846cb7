package builtin

import (
	"strings"

	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// deniedWrite and deniedNetwork are what programs print when the sandbox
// refuses a write or a connection.
var (
	deniedWrite = []string{"Read-only file system", "Permission denied", "Operation not permitted",
		"Not a directory", "File exists", "Device or resource busy"}
	deniedNetwork = []string{"Operation not permitted", "Network is unreachable", "Could not resolve host",
		"Temporary failure in name resolution", "Name or service not known", "Couldn't connect to server",
		"Connection refused", "not in sandbox.allowedHosts", "unable to resolve host", "Failed to connect"}
)

// sandboxNote explains a failed command's output that looks like the
// sandbox stopped it: what the sandbox allows and how to ask to run
// outside it. It returns "" when the output shows nothing of the kind.
func sandboxNote(output string, p sandbox.Policy) string {
	has := func(list []string) bool {
		for _, s := range list {
			if strings.Contains(output, s) {
				return true
			}
		}
		return false
	}
	write, network := has(deniedWrite), !p.Network && has(deniedNetwork)
	if !write && !network {
		return ""
	}
	var b strings.Builder
	b.WriteString("[sandbox: this command ran in the " + string(p.Mode) + " sandbox, which may have stopped it: ")
	var parts []string
	if write {
		w := "writes are allowed only in the workspace and $TMPDIR, never to .git/config, .git/hooks, .gitmodules, .mx-claw, .mcp.json or .claude"
		if p.Mode == sandbox.ModeReadOnly {
			w = "writes are allowed only in $TMPDIR"
		}
		parts = append(parts, w)
	}
	if network {
		n := "the network is off"
		if len(p.AllowedHosts) > 0 {
			n = "the network is reachable only through the proxy, for " + strings.Join(p.AllowedHosts, ", ")
		}
		parts = append(parts, n)
	}
	b.WriteString(strings.Join(parts, "; "))
	b.WriteString(`. If the command really needs more, call run_command again with "escalate": true and a one-line "justification"; the user will be asked to let it run outside the sandbox.]`)
	return b.String()
}
