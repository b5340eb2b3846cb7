package sandbox

import (
	"fmt"
	"strings"
)

// SeatbeltProfile returns the macOS sandbox-exec profile for plan: nothing
// allowed by default, then what a shell and its tools need (running
// programs, reading files, a few system services), writes to the writable
// roots with the protected paths denied again inside them, and the network
// as the policy says. proxyPort, when not zero, is the local proxy's port:
// the only network the command gets.
//
// It is generated and tested as text on every platform; only macOS runs
// it.
func SeatbeltProfile(plan Plan, network bool, proxyPort int) string {
	var b strings.Builder
	b.WriteString(`(version 1)
(deny default)

; Running programs; children inherit this profile.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; Reading is allowed everywhere; writing only where listed below.
(allow file-read*)
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty"))
(allow file-ioctl (literal "/dev/tty"))
(allow pseudo-tty)

; What libc, the dynamic loader and common runtimes look up.
(allow sysctl-read)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow user-preference-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data)
`)
	if len(plan.Writable) > 0 {
		b.WriteString("\n; The writable roots.\n(allow file-write*")
		for _, w := range plan.Writable {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbplString(w))
		}
		b.WriteString(")\n")
	}
	if deny := append(plan.sensitive(), plan.Masks...); len(deny) > 0 {
		b.WriteString("\n; Protected paths stay read-only, and absent ones cannot be created.\n(deny file-write*")
		seen := map[string]bool{}
		for _, p := range deny {
			if seen[p] {
				continue
			}
			seen[p] = true
			fmt.Fprintf(&b, "\n  (literal %s)\n  (subpath %s)", sbplString(p), sbplString(p))
		}
		b.WriteString(")\n")
	}
	switch {
	case network:
		b.WriteString("\n; Network: on.\n(allow network*)\n(allow system-socket)\n")
	case proxyPort > 0:
		fmt.Fprintf(&b, "\n; Network: only the local proxy.\n(allow network-outbound (remote tcp \"localhost:%d\"))\n", proxyPort)
	default:
		b.WriteString("\n; Network: off (local Unix sockets only).\n(allow network-outbound (remote unix-socket))\n")
	}
	return b.String()
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
