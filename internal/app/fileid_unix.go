//go:build unix

package app

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileID is a file's device and inode, "dev:ino".
func fileID(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(uint64(st.Ino), 10)
}
