package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// statInfo is what a snapshot takes from lstat: the entry's mode (as
// protocol.FileState.Mode), size, times in nanoseconds and inode. ctime
// (which no one can set back, unlike mtime) and ino are 0 where the system
// does not tell them; the stat cache then compares the rest.
type statInfo struct {
	mode         uint32
	size         int64
	mtime, ctime int64
	ino          uint64
}

// infoOf converts a FileInfo from os.Lstat.
func infoOf(fi fs.FileInfo) statInfo {
	si := statInfo{mode: modeOf(fi), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	si.ctime, si.ino = statExtra(fi)
	return si
}

// modeOf returns the protocol mode of a file, symlink or directory, 0 for
// anything else.
func modeOf(fi fs.FileInfo) uint32 {
	m := fi.Mode()
	perm := uint32(m.Perm())
	switch {
	case m.IsRegular():
		return protocol.ModeRegular | perm
	case m&fs.ModeSymlink != 0:
		return protocol.ModeSymlink
	case m.IsDir():
		return protocol.ModeDir | perm
	}
	return 0
}

// pathStatter stats entries by their full path, where no faster way is
// known (see stat_linux.go).
type pathStatter struct{ dir string }

func (p pathStatter) stat(name string) (statInfo, error) {
	fi, err := os.Lstat(filepath.Join(p.dir, name))
	if err != nil {
		return statInfo{}, err
	}
	return infoOf(fi), nil
}

func (pathStatter) close() {}

// dirStatter stats the entries of one directory by name.
type dirStatter interface {
	stat(name string) (statInfo, error)
	close()
}
