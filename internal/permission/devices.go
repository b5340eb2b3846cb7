package permission

import (
	"fmt"
	"os"
	"strings"
)

// Reading a device, a named pipe or a socket is not the quick, bounded
// read a read-only command is allowed for: `cat /dev/zero` streams without
// end, `cat fifo` blocks until someone writes, `head -c 9 /dev/urandom` is
// harmless but a device all the same. Such a read asks.

// quietDevices are the device files a read of ends at once or reads the
// command's own streams.
var quietDevices = []string{"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"}

// pathOnlyPrograms look at the paths they are given (print, test, stat,
// list them) without reading what is in them.
var pathOnlyPrograms = map[string]bool{
	"echo": true, "printf": true, "test": true, "[": true, "ls": true, "stat": true,
	"file": true, "du": true, "df": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "which": true, "type": true, "command": true,
	"find": true, "tree": true,
}

// deviceRead returns why a read-only program's arguments make it more
// than a read: one names a device file, a named pipe or a socket. It
// returns "" otherwise.
func deviceRead(name, cwd string, args []word) string {
	if pathOnlyPrograms[name] {
		return ""
	}
	for _, a := range args {
		s := a.s
		if !a.exact || s == "" || s == "-" {
			continue
		}
		if strings.HasPrefix(s, "-") {
			_, v, ok := strings.Cut(s, "=")
			if !ok {
				continue
			}
			s = v // --file=/dev/zero
		}
		if why := deviceFile(cwd, s); why != "" {
			return fmt.Sprintf("it reads %s, %s, which may never end", s, why)
		}
	}
	return ""
}

// deviceFile says what kind of special file the path s (relative to cwd)
// is — "a character device", "a named pipe", ... — or "" for a regular
// file, a directory, a quiet device or a path that does not exist.
func deviceFile(cwd, s string) string {
	p, ok := absPath(cwd, s)
	if !ok || isQuietDevice(p) {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil {
		if strings.HasPrefix(p, "/dev/") {
			return "a device file"
		}
		return ""
	}
	switch m := fi.Mode(); {
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return ""
}

func isQuietDevice(p string) bool {
	for _, d := range quietDevices {
		if p == d {
			return true
		}
	}
	return strings.HasPrefix(p, "/dev/fd/")
}
