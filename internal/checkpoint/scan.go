package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mx-claw/mx-claw/internal/ignore"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Limits bound what a checkpoint saves.
type Limits struct {
	// MaxFileSize is the largest file whose contents are saved; a larger
	// one is recorded by size and time only, and a change to it cannot be
	// undone. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxScanBytes caps the contents one snapshot saves anew; files past
	// it are saved by a later snapshot. 0 means DefaultMaxScanBytes.
	MaxScanBytes int64
	// MaxFiles is the most entries a whole-workspace snapshot takes on;
	// a larger workspace fails with ErrTooManyFiles. 0 means
	// DefaultMaxFiles.
	MaxFiles int
	// NoWatch makes every whole-workspace snapshot walk the workspace
	// instead of asking inotify what changed (see Snapshot); for tests,
	// and for file systems whose changes inotify does not see.
	NoWatch bool
}

// Defaults of Limits.
const (
	DefaultMaxFileSize  = 16 << 20
	DefaultMaxScanBytes = 512 << 20
	DefaultMaxFiles     = 200_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxScanBytes <= 0 {
		l.MaxScanBytes = DefaultMaxScanBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// racyWindow is how close to a scan's start a file may have changed and
// still be trusted by the stat cache of the next scan. File times come
// from a coarse kernel clock that may lag by a tick; a file changed within
// this window of the scan could change again within the same tick after it
// was read, with the same size and times, so the next scan reads it again
// (git's "racy clean" entries).
const racyWindow = 100 * time.Millisecond

// Entry is what a snapshot knows of one file, symlink or directory.
type Entry struct {
	protocol.FileState
	// MTime and CTime (nanoseconds) and Ino are the stat data the next
	// scan compares to skip reading an unchanged file.
	MTime int64
	CTime int64
	Ino   uint64
	// Racy marks an entry whose file changed too close to the scan to be
	// trusted without reading it again.
	Racy bool
	// Skipped says why the contents were not saved ("" if saved).
	Skipped string
}

// Manifest is a snapshot: the state of the workspace, or of some of its
// paths, at one moment, with every saved file's contents in the store.
type Manifest struct {
	// Entries holds files, symlinks and directories by slash-separated
	// path relative to the workspace root.
	Entries map[string]Entry
	// Scope lists the paths a partial snapshot looked at (with their
	// parent directories); nil for a whole-workspace snapshot.
	Scope []string
	// Taken is when the snapshot began.
	Taken time.Time
}

// Skipped returns the paths whose contents the snapshot did not save,
// each with the reason, in path order.
func (m *Manifest) Skipped() []string {
	var out []string
	for p, e := range m.Entries {
		if e.Skipped != "" {
			out = append(out, p+" ("+e.Skipped+")")
		}
	}
	slices.Sort(out)
	return out
}

// scanWorkers is how many goroutines stat and save files in parallel.
func scanWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

// item is one walked entry waiting for its stat: dir is the index of its
// directory in the walk's list of directories, name its base name.
type item struct {
	rel  string
	dir  int
	name string
}

// batch is a run of items of one directory, stat'ed through that
// directory.
type batch struct{ from, to int }

// Snapshot saves the state of the whole workspace — every file git would
// not ignore — and returns it. Files unchanged since the store's last
// snapshot (same mode, size, times and inode) are not read again.
//
// On Linux the first snapshot also watches every directory it walks
// (inotify), each before reading it; later snapshots then read only the
// events and look again at the paths they name, and walk the whole
// workspace again only when the events cannot say it all (a directory
// made, moved or removed, a .gitignore changed, the event queue
// overflowed, inotify's watches used up).
func (s *Store) Snapshot(ctx context.Context) (*Manifest, error) {
	s.snapshots.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadIndex()
	// What a warm-up did is this snapshot's to use (warm.go).
	s.takeWarm()
	start := time.Now()
	if s.watch != nil {
		dirty, full := s.watch.changes()
		if !full {
			return s.incremental(dirty, start)
		}
		s.watch.close()
		s.watch = nil
	}
	var w *watcher
	if !s.lim.NoWatch && !s.noWatch {
		var ok bool
		if w, ok = newWatcher(); !ok || w.add(s.root, "") != nil {
			if w != nil {
				w.close()
			}
			w, s.noWatch = nil, true
		} else if fi, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(gitInfo))); err == nil && fi.IsDir() {
			_ = w.add(s.root, gitInfo)
		}
	}
	items, dirs, err := s.walk(ctx, func(rel string) {
		if w != nil && w.add(s.root, rel) != nil {
			// Out of watches: this workspace is walked every time.
			w.close()
			w, s.noWatch = nil, true
		}
	})
	if err != nil {
		if w != nil {
			w.close()
		}
		return nil, err
	}
	// The walk lists a directory's entries together (a subdirectory's
	// own come after them): one batch per run of them.
	var batches []batch
	for i := range items {
		if i == 0 || items[i].dir != items[i-1].dir {
			batches = append(batches, batch{from: i})
		}
		batches[len(batches)-1].to = i + 1
	}
	entries := make([]Entry, len(items))
	ok := make([]bool, len(items))
	var budget atomic.Int64
	budget.Store(s.lim.MaxScanBytes)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for range scanWorkers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				bi := int(next.Add(1) - 1)
				if bi >= len(batches) || ctx.Err() != nil {
					return
				}
				b := batches[bi]
				st := openDirStat(dirs[items[b.from].dir])
				for i := b.from; i < b.to; i++ {
					it := items[i]
					prev, had := s.index[it.rel]
					e, exists, err := s.entry(it.rel, func() (statInfo, error) { return st.stat(it.name) }, prev, had, start, &budget)
					if err != nil {
						errOnce.Do(func() { firstErr = err })
						break
					}
					entries[i], ok[i] = e, exists
				}
				st.close()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		if w != nil {
			w.close()
		}
		return nil, err
	}
	if firstErr != nil {
		if w != nil {
			w.close()
		}
		return nil, firstErr
	}
	s.watch, s.scanned = w, true
	m := &Manifest{Entries: make(map[string]Entry, len(items)), Taken: start}
	changed := len(items) != len(s.index)
	for i, it := range items {
		if !ok[i] {
			continue // gone between the walk and the stat
		}
		m.Entries[it.rel] = entries[i]
		if !changed && s.index[it.rel] != entries[i] {
			changed = true
		}
	}
	s.index = m.Entries
	if changed {
		s.scheduleSave()
	}
	return m, nil
}

// walk lists the workspace's files, symlinks and directories that git
// would not ignore, and the directories holding them (absolute paths; the
// root first).
func (s *Store) walk(ctx context.Context, onDir func(rel string)) ([]item, []string, error) {
	dirs := []string{s.root}
	dirIndex := map[string]int{"": 0}
	var items []item
	err := ignore.New(s.root).Walk(".", func(rel string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := d.Type()
		if !t.IsDir() && !t.IsRegular() && t&fs.ModeSymlink == 0 {
			return nil // sockets, pipes, devices: nothing to restore
		}
		parent, name := "", rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			parent, name = rel[:i], rel[i+1:]
		}
		di, ok := dirIndex[parent]
		if !ok {
			// Walk reports a directory before its contents.
			di = len(dirs)
			dirs = append(dirs, filepath.Join(s.root, filepath.FromSlash(parent)))
			dirIndex[parent] = di
		}
		items = append(items, item{rel: rel, dir: di, name: name})
		if t.IsDir() {
			// Watched before its entries are read: a change after this
			// is an event, one before it is seen by the read.
			onDir(rel)
		}
		if len(items) > s.lim.MaxFiles {
			return fmt.Errorf("%w: the workspace has more than %d files and directories git does not ignore", ErrTooManyFiles, s.lim.MaxFiles)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", s.root, err)
	}
	return items, dirs, nil
}

// incremental is a snapshot made from the last one and the paths the
// watcher says changed since: each is looked at again (gone, ignored or
// saved anew). With nothing changed, the last snapshot's entries serve
// as they are. s.mu is held.
func (s *Store) incremental(dirty map[string]bool, start time.Time) (*Manifest, error) {
	if len(dirty) == 0 {
		return &Manifest{Entries: s.index, Taken: start}, nil
	}
	entries := maps.Clone(s.index)
	m := ignore.New(s.root)
	var budget atomic.Int64
	budget.Store(s.lim.MaxScanBytes)
	changed := false
	for p := range dirty {
		if _, err := cleanRel(p); err != nil {
			continue
		}
		abs := filepath.Join(s.root, filepath.FromSlash(p))
		fi, err := os.Lstat(abs)
		prev, had := entries[p]
		if err != nil || m.Match(p, fi.IsDir()) {
			if had {
				delete(entries, p)
				changed = true
			}
			continue
		}
		e, exists, err := s.entry(p, func() (statInfo, error) { return infoOf(fi), nil }, prev, had, start, &budget)
		if err != nil {
			return nil, err
		}
		switch {
		case !exists && had:
			delete(entries, p)
			changed = true
		case exists && (!had || prev != e):
			entries[p] = e
			changed = true
		}
	}
	if changed {
		s.index = entries
		s.scheduleSave()
	}
	return &Manifest{Entries: s.index, Taken: start}, nil
}

// SnapshotPaths saves the state of the given paths (slash-separated,
// relative to the workspace root) and of their parent directories, ignored
// or not, and returns it as a partial manifest.
func (s *Store) SnapshotPaths(ctx context.Context, paths []string) (*Manifest, error) {
	start := time.Now()
	m := &Manifest{Entries: make(map[string]Entry), Taken: start}
	seen := make(map[string]bool)
	var budget atomic.Int64
	budget.Store(s.lim.MaxScanBytes)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := cleanRel(p)
		if err != nil {
			continue // not ours to save; the tool refuses it anyway
		}
		for q := p; q != "."; q = path.Dir(q) {
			if seen[q] {
				continue
			}
			seen[q] = true
			m.Scope = append(m.Scope, q)
			abs := filepath.Join(s.root, filepath.FromSlash(q))
			e, exists, err := s.entry(q, func() (statInfo, error) {
				fi, err := os.Lstat(abs)
				if err != nil {
					return statInfo{}, err
				}
				return infoOf(fi), nil
			}, Entry{}, false, start, &budget)
			if err != nil {
				return nil, err
			}
			if exists {
				m.Entries[q] = e
			}
		}
	}
	slices.Sort(m.Scope)
	return m, nil
}

// entry stats the path rel (through lstat) and, unless prev (the index's
// entry) says it is unchanged, saves its contents. exists is false when
// nothing is there.
func (s *Store) entry(rel string, lstat func() (statInfo, error), prev Entry, had bool, start time.Time, budget *atomic.Int64) (e Entry, exists bool, err error) {
	si, err := lstat()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{Skipped: "unreadable: " + err.Error()}, true, nil
	}
	if si.mode == 0 {
		return Entry{}, false, nil // not a file, symlink or directory
	}
	e.Mode, e.Size, e.MTime, e.CTime, e.Ino = si.mode, si.size, si.mtime, si.ctime, si.ino
	if e.IsDir() {
		e.Size = 0
		return e, true, nil
	}
	racy := start.Add(-racyWindow).UnixNano()
	e.Racy = e.MTime >= racy || e.CTime >= racy
	if had && !prev.Racy && prev.OID != "" && prev.Mode == e.Mode && prev.Size == e.Size &&
		prev.MTime == e.MTime && prev.CTime == e.CTime && prev.Ino == e.Ino {
		e.OID = prev.OID
		return e, true, nil
	}
	if e.Mode&protocol.ModeTypeMask == protocol.ModeRegular && e.Size > s.lim.MaxFileSize {
		e.Skipped = fmt.Sprintf("%s, over the %s limit", humanSize(e.Size), humanSize(s.lim.MaxFileSize))
		return e, true, nil
	}
	if budget.Add(-e.Size) < 0 {
		e.Skipped = fmt.Sprintf("over the %s a checkpoint saves at once", humanSize(s.lim.MaxScanBytes))
		return e, true, nil
	}
	s.reads.Add(1)
	abs := filepath.Join(s.root, filepath.FromSlash(rel))
	var data []byte
	if e.Mode&protocol.ModeTypeMask == protocol.ModeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			e.Skipped = "unreadable: " + err.Error()
			return e, true, nil
		}
		data = []byte(target)
	} else if data, err = os.ReadFile(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Entry{}, false, nil
		}
		e.Skipped = "unreadable: " + err.Error()
		return e, true, nil
	}
	e.Size = int64(len(data))
	oid, err := s.obj.put(data)
	if err != nil {
		return Entry{}, false, err
	}
	e.OID = oid
	return e, true, nil
}

// cleanRel checks that p is a slash-separated path inside the workspace,
// not in .git, and returns it cleaned.
func cleanRel(p string) (string, error) {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "." || !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, "\\") && runtime.GOOS == "windows" {
		return "", fmt.Errorf("%q: %w", p, ErrOutside)
	}
	for _, c := range strings.Split(p, "/") {
		if strings.EqualFold(c, ".git") {
			return "", fmt.Errorf("%q: %w", p, ErrOutside)
		}
	}
	return p, nil
}

// humanSize writes a byte count for people.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
