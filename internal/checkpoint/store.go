package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Manager hands out the checkpoint store of each workspace, all kept under
// one directory ($MX_CLAW_HOME/checkpoints). It is safe for concurrent use.
type Manager struct {
	dir string
	lim Limits
	log *slog.Logger

	mu     sync.Mutex
	stores map[string]*Store // by canonical workspace root
}

// NewManager returns a Manager keeping its stores under dir; log (which
// may be nil) hears of index files that could not be saved.
func NewManager(dir string, lim Limits, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{dir: dir, lim: lim.withDefaults(), log: log, stores: make(map[string]*Store)}
}

// Dir returns the directory holding the stores.
func (m *Manager) Dir() string { return m.dir }

// For returns the store of the workspace at root (absolute, symlinks
// resolved), creating it on first use.
func (m *Manager) For(root string) (*Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.stores[root]; ok {
		return s, nil
	}
	s, err := openStore(filepath.Join(m.dir, Key(root)), root, m.lim, m.log)
	if err != nil {
		return nil, err
	}
	m.stores[root] = s
	return s, nil
}

// Close saves the stores' stat caches that have changed.
func (m *Manager) Close() error {
	m.mu.Lock()
	stores := make([]*Store, 0, len(m.stores))
	for _, s := range m.stores {
		stores = append(stores, s)
	}
	m.mu.Unlock()
	var errs []error
	for _, s := range stores {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// Key names a workspace's store: the first 16 hex digits of the SHA-256
// of its root.
func Key(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:8])
}

// Store is one workspace's checkpoint store: a directory laid out as a
// bare git repository whose objects are the blobs of every file version a
// snapshot saved, plus the stat cache (index) of the last whole-workspace
// snapshot. It is safe for concurrent use; snapshots of one store run one
// at a time.
type Store struct {
	dir  string
	root string
	lim  Limits
	obj  *objects
	log  *slog.Logger

	mu      sync.Mutex       // one snapshot at a time; guards index, watch
	index   map[string]Entry // the last whole-workspace snapshot
	loaded  bool
	watch   *watcher // what changed since the last snapshot (Linux); nil: walk
	noWatch bool     // inotify is not to be had here: always walk
	scanned bool     // a whole snapshot was taken in this process
	warm    *warmUp  // the background first snapshot, if one was started

	saveMu  sync.Mutex // guards pending and saving
	pending map[string]Entry
	saving  bool
	saved   chan struct{} // closed when the running save ends

	// reads counts the files snapshots (and warm-ups) have read;
	// snapshots counts the calls of Snapshot (see Stats).
	reads, snapshots atomic.Int64
}

// Stats says how much a store has done in this process: for tests and
// benchmarks.
type Stats struct {
	// Snapshots is how many whole-workspace snapshots were asked for
	// (Snapshot; a warm-up is none).
	Snapshots int64
	// Reads is how many files snapshots and warm-ups read and saved.
	Reads int64
}

// Stats returns the store's counts so far.
func (s *Store) Stats() Stats { return Stats{Snapshots: s.snapshots.Load(), Reads: s.reads.Load()} }

// indexVersion is the format of the index file.
const indexVersion = 1

// openStore creates (if needed) and opens the store at dir for the
// workspace root; log may be nil (nothing is logged).
func openStore(dir, root string, lim Limits, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{filepath.Join(dir, "objects"), filepath.Join(dir, "refs", "heads")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoint store: %w", err)
		}
	}
	// Enough of a bare repository for git to read the objects.
	for name, text := range map[string]string{
		"HEAD":      "ref: refs/heads/main\n",
		"config":    "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
		"workspace": root + "\n",
	} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := writeAtomic(p, []byte(text), 0o600); err != nil {
				return nil, fmt.Errorf("checkpoint store: %w", err)
			}
		}
	}
	return &Store{dir: dir, root: root, lim: lim.withDefaults(), obj: newObjects(filepath.Join(dir, "objects")), log: log}, nil
}

// Root returns the workspace root.
func (s *Store) Root() string { return s.root }

// Dir returns the store's directory (a bare git repository).
func (s *Store) Dir() string { return s.dir }

// indexFile is the stat cache's file.
func (s *Store) indexFile() string { return filepath.Join(s.dir, "mx-claw-index") }

// savedIndex is the gob form of the index file.
type savedIndex struct {
	Version int
	Root    string
	Entries map[string]Entry
}

// loadIndex reads the stat cache once; a missing or unreadable one is an
// empty cache (the next snapshot reads every file). s.mu is held.
func (s *Store) loadIndex() {
	if s.loaded {
		return
	}
	s.loaded = true
	s.index = map[string]Entry{}
	data, err := os.ReadFile(s.indexFile())
	if err != nil {
		return
	}
	var si savedIndex
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&si) != nil || si.Version != indexVersion || si.Root != s.root {
		return
	}
	// An entry whose blob is gone (the store was cleaned by hand) is
	// dropped, so the next snapshot saves the file again.
	for p, e := range si.Entries {
		if e.OID != "" && !s.obj.has(e.OID) {
			delete(si.Entries, p)
		}
	}
	s.index = si.Entries
}

// scheduleSave saves the index in the background; saves requested while
// one runs are merged into one more. s.mu is held.
func (s *Store) scheduleSave() {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.pending = s.index
	if s.saving {
		return
	}
	s.saving = true
	s.saved = make(chan struct{})
	go s.saveLoop()
}

func (s *Store) saveLoop() {
	for {
		s.saveMu.Lock()
		idx := s.pending
		s.pending = nil
		if idx == nil {
			s.saving = false
			close(s.saved)
			s.saveMu.Unlock()
			return
		}
		s.saveMu.Unlock()
		if err := s.writeIndex(idx); err != nil {
			s.log.Warn("save checkpoint index", "store", s.dir, "err", err)
		}
	}
}

// writeIndex writes the stat cache. Snapshots never change a map once it
// is the index, so idx is read without a lock.
func (s *Store) writeIndex(idx map[string]Entry) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(savedIndex{Version: indexVersion, Root: s.root, Entries: idx}); err != nil {
		return err
	}
	return writeAtomic(s.indexFile(), buf.Bytes(), 0o600)
}

// Close stops a warm-up (keeping what it saved), stops watching the
// workspace and saves the stat cache.
func (s *Store) Close() error {
	s.mu.Lock()
	s.takeWarm()
	wu := s.warm
	if s.watch != nil {
		s.watch.close()
		s.watch = nil
	}
	s.mu.Unlock()
	if wu != nil {
		<-wu.done
	}
	return s.Flush()
}

// Flush waits for a background save of the stat cache to end.
func (s *Store) Flush() error {
	s.saveMu.Lock()
	ch := s.saved
	saving := s.saving
	s.saveMu.Unlock()
	if saving {
		<-ch
	}
	return nil
}

// GC removes the blobs that neither keep (the file changes recorded for
// the workspace's sessions) nor the stat cache refer to, if older than
// grace (so a snapshot running in another process keeps what it just
// saved). It returns how many it removed.
func (s *Store) GC(keep map[string]bool, grace time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadIndex()
	all := make(map[string]bool, len(keep)+len(s.index))
	for oid := range keep {
		all[oid] = true
	}
	for _, e := range s.index {
		if e.OID != "" {
			all[e.OID] = true
		}
	}
	return s.obj.gc(all, grace)
}

// Read returns the contents of a saved blob.
func (s *Store) Read(oid string) ([]byte, error) { return s.obj.get(oid) }
