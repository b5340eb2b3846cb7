package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultMax is the cap on a file read with a max of zero or less: 1 MiB,
// far more than any settings or config file needs.
const DefaultMax = 1 << 20

// ErrNotRegular is matched by the error for a file that is not a regular
// file: a directory, a named pipe, a socket or a device.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched by the error for a file over the cap.
var ErrTooLarge = errors.New("file too large")

// ErrSymlink is matched by the error ReadInTree returns for a symbolic
// link on the way to the file or as the file itself.
var ErrSymlink = errors.New("is a symbolic link")

// Open opens the file at path for reading without blocking and returns it
// with its information, or an error matching ErrNotRegular if it is not a
// regular file. The caller closes the file.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := regular(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile returns the contents of the regular file at path, refusing a
// file over max bytes (DefaultMax if max <= 0) with an error matching
// ErrTooLarge. A missing file is an error matching fs.ErrNotExist.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, fi, path, max)
}

// ReadFS is ReadFile for a file of fsys (an os.DirFS or an os.Root's FS),
// which must implement fs.StatFS. An fs.FS cannot be asked to open without
// blocking, so the file is checked before it is opened (refusing anything
// but a regular file) and again after; a named pipe swapped in between
// the two by a process running on the machine could still block the open.
func ReadFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	sfs, ok := fsys.(fs.StatFS)
	if !ok {
		return nil, fmt.Errorf("%s: %w (its file system cannot tell what it is before opening it)", name, ErrNotRegular)
	}
	fi, err := sfs.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi.Mode())
	}
	return readCapped(f, fi, name, max)
}

// ReadInTree is ReadFile for the file rel inside the directory root (which
// may itself be reached through links): it refuses, with an error matching
// ErrSymlink, a symbolic link at any component of rel, so the file read is
// the one in the tree and not one a link points to. A missing file is an
// error matching fs.ErrNotExist.
func ReadInTree(root, rel string, max int64) ([]byte, error) {
	p := root
	for _, c := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			return nil, &LinkError{Path: p, Target: target}
		}
	}
	return ReadFile(p, max)
}

// LinkError reports a symbolic link where ReadInTree wants a real file or
// directory. It matches ErrSymlink.
type LinkError struct {
	// Path is the link.
	Path string
	// Target is where it points, as stored.
	Target string
}

// Error returns "<path> is a symbolic link (to <target>)".
func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link (to %s)", e.Path, e.Target)
}

// Is makes a LinkError match ErrSymlink.
func (e *LinkError) Is(target error) bool { return target == ErrSymlink }

// regular returns the information of the open file f, or an error if it
// is not a regular file.
func regular(f *os.File, path string) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode())
	}
	return fi, nil
}

// readCapped reads f, whose information is fi, refusing more than max
// bytes. The size is checked first, and the read is capped too, in case
// the file grows meanwhile.
func readCapped(f io.Reader, fi fs.FileInfo, path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMax
	}
	if fi.Size() > max {
		return nil, tooLarge(path, max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge(path, max)
	}
	return data, nil
}

func tooLarge(path string, max int64) error {
	return fmt.Errorf("%s: %w: more than %s; mx-claw does not read a file this large here", path, ErrTooLarge, size(max))
}

func notRegular(path string, m fs.FileMode) error {
	return fmt.Errorf("%s: %w (it is %s); mx-claw reads only regular files here", path, ErrNotRegular, Kind(m))
}

// Kind names the type of a file mode in a few words: "a directory", "a
// named pipe", "a device", …
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// size formats a byte count: "1 MiB", "512 KiB", "100 B".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
