//go:build darwin || freebsd || netbsd

package checkpoint

import (
	"io/fs"
	"syscall"
)

// statExtra returns the inode change time and number of an os.Lstat.
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano(), uint64(st.Ino)
	}
	return 0, 0
}
