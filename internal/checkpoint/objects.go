package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// objects is a git object directory holding blobs as loose objects:
// objects/ab/cdef… is zlib("blob <size>\x00" + contents), named by the
// SHA-1 of what is compressed — exactly git's format, so `git
// --git-dir=<store> cat-file -p <oid>` reads any of them. Blobs are written
// in-process (no git needed) and never change once written; a write of a
// blob that is already there costs one stat. It is safe for concurrent use,
// by goroutines and by processes.
type objects struct {
	dir string // the objects directory

	mu      sync.Mutex
	fanouts map[string]bool // objects/xx directories known to exist
}

func newObjects(dir string) *objects {
	return &objects{dir: dir, fanouts: make(map[string]bool)}
}

// blobID returns the git blob id of data.
func blobID(data []byte) string {
	h := sha1.New()
	h.Write(blobHeader(len(data)))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func blobHeader(n int) []byte {
	return append(strconv.AppendInt([]byte("blob "), int64(n), 10), 0)
}

// path returns the file of the object oid.
func (o *objects) path(oid string) string {
	return filepath.Join(o.dir, oid[:2], oid[2:])
}

// has reports whether the object is stored.
func (o *objects) has(oid string) bool {
	if len(oid) != 40 {
		return false
	}
	_, err := os.Stat(o.path(oid))
	return err == nil
}

// put stores data as a blob, unless it is there already, and returns its
// id.
func (o *objects) put(data []byte) (string, error) {
	oid := blobID(data)
	if o.has(oid) {
		return oid, nil
	}
	fan := filepath.Join(o.dir, oid[:2])
	if err := o.mkFanout(fan); err != nil {
		return "", err
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	zw := zlibPool.Get().(*zlib.Writer)
	defer zlibPool.Put(zw)
	zw.Reset(buf)
	zw.Write(blobHeader(len(data)))
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compress blob %s: %w", oid, err)
	}
	if err := writeObject(o.path(oid), buf.Bytes()); err != nil {
		return "", fmt.Errorf("store blob %s: %w", oid, err)
	}
	return oid, nil
}

// Compressors and buffers are reused: a zlib writer's state is large
// enough that making one per blob dominated a first snapshot.
var (
	zlibPool = sync.Pool{New: func() any {
		zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return zw
	}}
	bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// writeObject writes a compressed object read-only through a temporary
// file and a rename, so a reader never sees half of one; if another
// writer got there first, theirs is as good.
func writeObject(path string, data []byte) error {
	tmp := path + ".tmp-" + randomSuffix()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// mkFanout creates the objects/xx directory once per process.
func (o *objects) mkFanout(dir string) error {
	o.mu.Lock()
	known := o.fanouts[dir]
	o.mu.Unlock()
	if known {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	o.mu.Lock()
	o.fanouts[dir] = true
	o.mu.Unlock()
	return nil
}

// get returns a blob's contents, checking that they hash to oid.
func (o *objects) get(oid string) ([]byte, error) {
	if len(oid) != 40 {
		return nil, fmt.Errorf("blob %q: %w", oid, ErrMissingObject)
	}
	f, err := os.Open(o.path(oid))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", oid, ErrMissingObject)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", oid, err)
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w: %w", oid, ErrCorruptObject, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w: %w", oid, ErrCorruptObject, err)
	}
	head, data, ok := bytes.Cut(raw, []byte{0})
	if !ok || string(head) != "blob "+strconv.Itoa(len(data)) || blobID(data) != oid {
		return nil, fmt.Errorf("blob %s: %w", oid, ErrCorruptObject)
	}
	return data, nil
}

// gc removes the objects not in keep whose files are older than grace,
// and returns how many it removed.
func (o *objects) gc(keep map[string]bool, grace time.Duration) (int, error) {
	cutoff := time.Now().Add(-grace)
	removed := 0
	fans, err := os.ReadDir(o.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("checkpoint gc: %w", err)
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		dir := filepath.Join(o.dir, fan.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			oid := fan.Name() + e.Name()
			if keep[oid] {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().After(cutoff) {
				continue
			}
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers see all of it or nothing.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp-" + randomSuffix()
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
