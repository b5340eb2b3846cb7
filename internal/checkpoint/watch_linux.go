package checkpoint

import (
	"errors"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchMask is what a watched directory reports: any change to an entry's
// contents, metadata or name, and the directory's own removal or move.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// watcher tells, through inotify, which entries of the watched
// directories changed since it was last asked. Events are queued by the
// kernel as part of the system call that makes the change, so once a
// command has exited, reading the queue returns everything it did.
type watcher struct {
	fd   int
	dirs map[int32]string // watch descriptor → directory, relative ("" for the root)
	buf  []byte
}

// gitInfo is the directory of .git/info/exclude, watched so that a change
// of its ignore rules asks for a whole snapshot.
const gitInfo = ".git/info"

// newWatcher starts an inotify instance with no watches; ok is false where
// inotify cannot be used.
func newWatcher() (*watcher, bool) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, false
	}
	return &watcher{fd: fd, dirs: make(map[int32]string), buf: make([]byte, 64<<10)}, true
}

// add watches the directory rel ("" for the root) of root. It fails when
// the user's inotify watches are used up (fs.inotify.max_user_watches).
func (w *watcher) add(root, rel string) error {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(root, filepath.FromSlash(rel)), watchMask)
	if err != nil {
		return err
	}
	w.dirs[int32(wd)] = rel
	return nil
}

// changes reads the events queued since the last call and returns the
// paths (relative, slash-separated) whose entries changed. full is true
// when the events cannot be trusted to say it all: the queue overflowed, a
// directory was made, removed or moved, a watch went away, or ignore rules
// (a .gitignore) changed. Then a whole snapshot is needed.
func (w *watcher) changes() (paths map[string]bool, full bool) {
	paths = make(map[string]bool)
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) || n == 0 {
			return paths, full
		}
		if err != nil {
			return paths, true
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameLen := int(ev.Len)
			name := ""
			if nameLen > 0 {
				raw := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
				for i, c := range raw {
					if c == 0 {
						raw = raw[:i]
						break
					}
				}
				name = string(raw)
			}
			off += unix.SizeofInotifyEvent + nameLen
			mask := ev.Mask
			dir, known := w.dirs[ev.Wd]
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0, mask&unix.IN_IGNORED != 0, !known,
				mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0,
				mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0,
				name == ".gitignore", dir == gitInfo:
				full = true
			case name == "":
				// The directory's own metadata (its mode).
				if dir != "" {
					paths[dir] = true
				}
			case name == ".git":
				// The repository's own directory: never in a snapshot.
			default:
				p := name
				if dir != "" {
					p = dir + "/" + name
				}
				paths[p] = true
			}
		}
	}
}

// close stops the watcher.
func (w *watcher) close() { unix.Close(w.fd) }
