package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// fakeEditor holds buffers by absolute path, as an ACP client does.
type fakeEditor struct {
	read, write bool // what it offers
	fail        error

	mu      sync.Mutex
	buffers map[string]string
	writes  []string
}

func (e *fakeEditor) ReadTextFile(ctx context.Context, abs string) (string, bool, error) {
	if !e.read {
		return "", false, nil
	}
	if e.fail != nil {
		return "", false, e.fail
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	text, ok := e.buffers[abs]
	if !ok {
		data, err := os.ReadFile(abs)
		if err != nil {
			return "", false, err
		}
		text = string(data)
	}
	return text, true, nil
}

func (e *fakeEditor) WriteTextFile(ctx context.Context, abs, content string) (bool, error) {
	if !e.write {
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buffers[abs] = content
	e.writes = append(e.writes, abs)
	return true, nil
}

// TestEditorBuffers shows the file tools working on the editor's unsaved
// buffers: what the model reads and edits is the buffer, the edit goes
// back through the editor, and the disk is left to the editor.
func TestEditorBuffers(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	env.Files = tools.NewFileTracker(root)
	writeFiles(t, root, map[string]string{"a.txt": "on disk\n"})
	abs := filepath.Join(root, "a.txt")
	ed := &fakeEditor{read: true, write: true, buffers: map[string]string{abs: "unsaved line\n"}}
	env.Editor = ed

	out, err := run(t, newReadFile(), env, `{"path":"a.txt"}`)
	if err != nil || !strings.Contains(out, "unsaved line") || strings.Contains(out, "on disk") {
		t.Fatalf("read_file should show the buffer: %q, %v", out, err)
	}
	out, err = run(t, newEditFile(), env, `{"path":"a.txt","old_string":"unsaved","new_string":"edited"}`)
	if err != nil || !strings.Contains(out, "+edited line") {
		t.Fatalf("edit_file on the buffer: %q, %v", out, err)
	}
	if got := ed.buffers[abs]; got != "edited line\n" {
		t.Fatalf("buffer after edit = %q", got)
	}
	if data, _ := os.ReadFile(abs); string(data) != "on disk\n" {
		t.Fatalf("the disk is the editor's to write: %q", data)
	}
	// The write was recorded by content: the next edit needs no new read.
	out, err = run(t, newWriteFile(), env, `{"path":"a.txt","content":"whole\n"}`)
	if err != nil || !strings.Contains(out, "-edited line") {
		t.Fatalf("write_file through the editor: %q, %v", out, err)
	}
	// A buffer changed behind the model's back fails the guard.
	ed.buffers[abs] = "someone typed\n"
	if _, err := run(t, newEditFile(), env, `{"path":"a.txt","old_string":"typed","new_string":"x"}`); !errors.Is(err, tools.ErrFileChanged) {
		t.Fatalf("changed buffer: %v", err)
	}
	// The workspace's checks come before the editor.
	if _, err := run(t, newWriteFile(), env, `{"path":"../outside.txt","content":"x"}`); err == nil {
		t.Fatal("a path outside the workspace reached the editor")
	}
	if len(ed.writes) != 2 {
		t.Fatalf("editor writes = %v, want 2", ed.writes)
	}
}

// TestEditorFallsBackToDisk shows an editor that offers only reading (or
// nothing) leaving the rest to the disk, and an editor's failure reported.
func TestEditorFallsBackToDisk(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	env.Files = tools.NewFileTracker(root)
	writeFiles(t, root, map[string]string{"a.txt": "disk\n"})
	abs := filepath.Join(root, "a.txt")
	env.Editor = &fakeEditor{read: true, buffers: map[string]string{abs: "disk\n"}}
	if _, err := run(t, newReadFile(), env, `{"path":"a.txt"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, newEditFile(), env, `{"path":"a.txt","old_string":"disk","new_string":"saved"}`); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(abs); string(data) != "saved\n" {
		t.Fatalf("an editor that does not write leaves it to the disk: %q", data)
	}
	env.Editor = &fakeEditor{read: true, fail: errors.New("buffer gone")}
	if _, err := run(t, newReadFile(), env, `{"path":"a.txt"}`); err == nil || !strings.Contains(err.Error(), "editor could not read") {
		t.Fatalf("editor failure: %v", err)
	}
}
