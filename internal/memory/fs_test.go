package memory

import (
	"io/fs"
	"sync"
	"sync/atomic"
)

// countingFS is the real file system, counting opens and bytes read, and
// failing opens of the paths in fail with fs.ErrPermission.
type countingFS struct {
	OSFS
	fail  map[string]bool
	bytes atomic.Int64

	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	if c.opens == nil {
		c.opens = make(map[string]int)
	}
	c.opens[name]++
	c.mu.Unlock()
	if c.fail[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	f, err := c.OSFS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, &c.bytes}, nil
}

// opensOf returns how often each of paths was opened (up to two).
func (c *countingFS) opensOf(paths ...string) [2]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n [2]int
	for i, p := range paths {
		n[i] = c.opens[p]
	}
	return n
}

type countingFile struct {
	fs.File
	n *atomic.Int64
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.n.Add(int64(n))
	return n, err
}
