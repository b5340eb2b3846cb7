package memory

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// FS is the file system Load reads. OSFS is the real one; tests substitute
// their own to count or fail reads.
type FS interface {
	// Stat, Lstat and Open behave like their namesakes in package os.
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	Open(name string) (fs.File, error)
	// EvalSymlinks returns name with every symbolic link resolved, like
	// filepath.EvalSymlinks.
	EvalSymlinks(name string) (string, error)
}

// OSFS is the operating system's file system.
type OSFS struct{}

// Stat calls os.Stat.
func (OSFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Lstat calls os.Lstat.
func (OSFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Open opens a regular file without blocking (safefile.Open): a named
// pipe or a device is an error, not a hang.
func (OSFS) Open(name string) (fs.File, error) {
	f, _, err := safefile.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// EvalSymlinks calls filepath.EvalSymlinks.
func (OSFS) EvalSymlinks(name string) (string, error) { return filepath.EvalSymlinks(name) }

// maxCacheEntries bounds a Cache; past it the cache starts over.
const maxCacheEntries = 1024

// Cache remembers the content of files Load has read, keyed by path,
// modification time and size, so discovering the same tree again reads only
// what changed. An edit that keeps both the size and the modification time
// (within the file system's timestamp resolution) goes unnoticed; that is
// the price of not reading files to compare them.
//
// The zero value is ready to use. A Cache is safe for concurrent use; two
// loads missing the same file at once may both read it.
type Cache struct {
	mu    sync.Mutex
	files map[string]cachedFile
}

type cachedFile struct {
	modTime time.Time
	size    int64
	// limit is the most bytes the read took: data is the whole file if
	// it holds size bytes, else its first limit bytes.
	limit int64
	data  []byte
}

// read returns up to limit bytes of the file at path, whose current Stat is
// fi, from the cache when path, modification time and size match.
func (c *Cache) read(fsys FS, path string, fi fs.FileInfo, limit int64) ([]byte, error) {
	if c == nil {
		return readLimited(fsys, path, limit)
	}
	c.mu.Lock()
	e, ok := c.files[path]
	c.mu.Unlock()
	if ok && e.modTime.Equal(fi.ModTime()) && e.size == fi.Size() &&
		(e.limit >= limit || int64(len(e.data)) == e.size) {
		return e.data[:min(int64(len(e.data)), limit)], nil
	}
	data, err := readLimited(fsys, path, limit)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil || len(c.files) >= maxCacheEntries {
		c.files = make(map[string]cachedFile)
	}
	c.files[path] = cachedFile{modTime: fi.ModTime(), size: fi.Size(), limit: limit, data: data}
	return data, nil
}

// readLimited reads at most limit bytes of the file at path.
func readLimited(fsys FS, path string, limit int64) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
