package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultMaxOutputFile caps one call's output file (see OutputFiles).
const DefaultMaxOutputFile = 64 << 20

// OutputFiles keeps, one file per call, the whole output of a session's
// calls whose result had to be cut for the model (run_command's head and
// tail), so read_tool_output can page through all of it later while
// memory, the store and the event stream only ever hold the cut.
// Files are named after the call's id in Dir; each is capped at Max bytes.
type OutputFiles struct {
	// Dir is the session's directory, created on the first write.
	Dir string
	// Max caps each file; DefaultMaxOutputFile if 0.
	Max int64
}

// path returns the file of a call. Call ids come from the model, so one
// that is not a plain name is replaced by its hash.
func (o *OutputFiles) path(callID string) string {
	name := callID
	for _, r := range callID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			name = ""
			break
		}
	}
	if name == "" || len(name) > 100 {
		sum := sha256.Sum256([]byte(callID))
		name = "h" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(o.Dir, name+".out")
}

// Create starts the output file of a call, replacing an older one.
func (o *OutputFiles) Create(callID string) (*OutputFile, error) {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("keep output: %w", err)
	}
	p := o.path(callID)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("keep output: %w", err)
	}
	max := o.Max
	if max <= 0 {
		max = DefaultMaxOutputFile
	}
	return &OutputFile{f: f, path: p, max: max}, nil
}

// Open opens the kept output of a call; the error wraps fs.ErrNotExist
// when there is none.
func (o *OutputFiles) Open(callID string) (*os.File, error) {
	return os.Open(o.path(callID))
}

// OutputFile is one call's output being kept. Write never fails, so a
// full disk cannot fail the command whose output it keeps: the first error
// is remembered (Err) and later writes are only counted.
type OutputFile struct {
	f     *os.File
	path  string
	max   int64
	kept  int64
	total int64
	err   error
}

// Write keeps p up to the file's cap.
func (w *OutputFile) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - w.kept; room > 0 && w.err == nil {
		n, err := w.f.Write(p[:min(int64(len(p)), room)])
		w.kept += int64(n)
		w.err = err
	}
	return len(p), nil
}

// Kept returns how many bytes the file holds and how many were written in
// all.
func (w *OutputFile) Kept() (kept, total int64) { return w.kept, w.total }

// Err returns the first error writing the file.
func (w *OutputFile) Err() error { return w.err }

// Keep closes the file and leaves it for read_tool_output.
func (w *OutputFile) Keep() error {
	err := w.f.Close()
	if w.err != nil {
		err = w.err
	}
	if err != nil {
		_ = os.Remove(w.path)
	}
	return err
}

// Discard closes and removes the file: the result held all of it.
func (w *OutputFile) Discard() {
	_ = w.f.Close()
	if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.err = err
	}
}
