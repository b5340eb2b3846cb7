package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ErrFileNotRead is matched (with errors.Is) by the error
// [FileTracker.Check] returns for a file the session has not read.
var ErrFileNotRead = errors.New("file has not been read in this session")

// ErrFileChanged is matched (with errors.Is) by the error
// [FileTracker.Check] returns for a file that changed on disk since the
// session last read or wrote it.
var ErrFileChanged = errors.New("file changed on disk since it was last read")

// FileTracker is the read-before-write guard of one session. It remembers,
// per canonical absolute path (as [Workspace.Resolve] returns it), the
// version of the file the session last read or wrote: its modification
// time, size and SHA-256. Write tools call [FileTracker.Check] before they
// change an existing file, so the model never overwrites a file it has not
// seen, or one that someone else changed after it looked.
//
// Create one per session with [NewFileTracker]; the zero value works too
// but names files by their absolute paths in errors. A FileTracker is safe
// for concurrent use.
type FileTracker struct {
	root string // shown paths are relative to it
	// onRecord, if set, is told of every version recorded, so it can be
	// kept beyond the process (see SetOnRecord).
	onRecord func(protocol.FileVersion)

	mu    sync.Mutex
	files map[string]fileVersion
}

// SetOnRecord makes the tracker call f with every version it records (by a
// read, a write or a check that found the file touched but unchanged), so
// the caller can persist them; Restore puts them back. f may be called
// from several goroutines at once. Set it before the tracker is shared.
func (t *FileTracker) SetOnRecord(f func(protocol.FileVersion)) { t.onRecord = f }

// Restore adds versions recorded earlier (by another process, say) to the
// tracker. Versions with a malformed hash are skipped.
func (t *FileTracker) Restore(versions []protocol.FileVersion) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files == nil {
		t.files = make(map[string]fileVersion, len(versions))
	}
	for _, v := range versions {
		var sum [sha256.Size]byte
		if b, err := hex.DecodeString(v.SHA256); err != nil || len(b) != len(sum) {
			continue
		} else {
			copy(sum[:], b)
		}
		t.files[v.Path] = fileVersion{modTime: v.ModTime, size: v.Size, sum: sum}
	}
}

// fileVersion is what a FileTracker remembers of a file.
type fileVersion struct {
	modTime time.Time
	size    int64
	sum     [sha256.Size]byte
}

// NewFileTracker returns an empty tracker whose errors show paths inside
// root (the canonical workspace root, [Workspace.Root]) relative to it, as
// the file tools do.
func NewFileTracker(root string) *FileTracker {
	return &FileTracker{root: root}
}

// RecordRead records that the session has read the file at abs, whose
// contents are data and whose information, taken before reading, is fi.
// A read of part of a file (an offset and limit) counts as reading it.
func (t *FileTracker) RecordRead(abs string, data []byte, fi fs.FileInfo) {
	t.RecordReadSum(abs, sha256.Sum256(data), fi)
}

// RecordReadSum is [FileTracker.RecordRead] for a caller that streamed the
// file and has only the SHA-256 of its contents.
func (t *FileTracker) RecordReadSum(abs string, sum [sha256.Size]byte, fi fs.FileInfo) {
	t.record(abs, sum, fi)
}

// RecordWrite records that the session has written data to the file at
// abs, whose information after the write is fi, so its next edit needs no
// new read.
func (t *FileTracker) RecordWrite(abs string, data []byte, fi fs.FileInfo) {
	t.record(abs, sha256.Sum256(data), fi)
}

func (t *FileTracker) record(abs string, sum [sha256.Size]byte, fi fs.FileInfo) {
	v := fileVersion{sum: sum, size: -1}
	if fi != nil {
		v.modTime, v.size = fi.ModTime(), fi.Size()
	}
	t.mu.Lock()
	if t.files == nil {
		t.files = make(map[string]fileVersion)
	}
	t.files[abs] = v
	t.mu.Unlock()
	if t.onRecord != nil {
		t.onRecord(protocol.FileVersion{Path: abs, ModTime: v.modTime, Size: v.size, SHA256: hex.EncodeToString(v.sum[:])})
	}
}

// Check returns nil if the file at abs, whose information is fi and whose
// contents are current, is the version the session last read or wrote.
// The modification time and size are compared first; if they differ the
// contents are hashed, so a file touched without being changed still
// passes. Otherwise the error (matching [ErrFileNotRead] or
// [ErrFileChanged]) tells the model to read the file again.
func (t *FileTracker) Check(abs string, fi fs.FileInfo, current []byte) error {
	t.mu.Lock()
	v, ok := t.files[abs]
	t.mu.Unlock()
	if !ok {
		return &guardError{
			msg:  fmt.Sprintf("%s has not been read in this session; read it with read_file before editing it", t.display(abs)),
			kind: ErrFileNotRead,
		}
	}
	if fi != nil && fi.ModTime().Equal(v.modTime) && fi.Size() == v.size {
		return nil
	}
	sum := sha256.Sum256(current)
	if sum != v.sum {
		modified := "at an unknown time"
		if fi != nil {
			modified = fi.ModTime().Format(time.DateTime)
		}
		return &guardError{
			msg: fmt.Sprintf("%s changed on disk since it was last read (modified %s); read it again before editing it",
				t.display(abs), modified),
			kind: ErrFileChanged,
		}
	}
	// Same contents, new time: remember the time so the next check is
	// cheap again.
	t.record(abs, sum, fi)
	return nil
}

// display is how errors show abs: relative to the root with forward
// slashes when inside it, else as it is.
func (t *FileTracker) display(abs string) string {
	if t.root == "" || !within(t.root, abs) {
		return abs
	}
	rel, err := filepath.Rel(t.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

// guardError is an error of the read-before-write guard.
type guardError struct {
	msg  string
	kind error
}

func (e *guardError) Error() string { return e.msg }

func (e *guardError) Is(target error) bool { return target == e.kind }
