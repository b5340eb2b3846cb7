//go:build unix

package builtin

import (
	"io/fs"
	"syscall"
)

// hardLinks returns the number of hard links of the file fi describes, or
// 1 if the system does not say.
func hardLinks(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
