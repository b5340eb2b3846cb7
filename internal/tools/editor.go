package tools

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
)

// Editor is the user's editor when it offers its files to the agent (the
// Agent Client Protocol's fs/read_text_file and fs/write_text_file): the
// file tools then read what the user sees, unsaved changes included, and
// write through the editor, so its buffers and undo history follow.
//
// Paths are absolute and have passed the workspace's checks before they
// reach the editor; the editor is a different way in to the same files,
// never a way past the boundary.
type Editor interface {
	// ReadTextFile returns the text of the file at abs as the editor has
	// it. ok is false when the editor does not offer reading; the disk is
	// read then.
	ReadTextFile(ctx context.Context, abs string) (content string, ok bool, err error)
	// WriteTextFile replaces the text of the file at abs. ok is false
	// when the editor does not offer writing; the disk is written then.
	WriteTextFile(ctx context.Context, abs, content string) (ok bool, err error)
}

// ReadText returns the contents of the file at abs (canonical, as
// Workspace.Resolve returns it): the editor's text when env has an editor
// that reads, else the disk's. fromEditor says which: an editor's buffer
// has no modification time, so the read-before-write guard must know it
// by its contents alone (record and check it with a nil FileInfo).
func ReadText(ctx context.Context, env *Env, ws *Workspace, abs string) (data []byte, fromEditor bool, err error) {
	if env != nil && env.Editor != nil {
		text, ok, err := env.Editor.ReadTextFile(ctx, abs)
		if err != nil {
			return nil, false, &editorError{op: "read", err: err}
		}
		if ok {
			return []byte(text), true, nil
		}
	}
	data, err = ws.ReadFile(abs)
	return data, false, err
}

// OpenText is ReadText for readers that stream the file.
func OpenText(ctx context.Context, env *Env, ws *Workspace, abs string) (r io.ReadCloser, fromEditor bool, err error) {
	if env != nil && env.Editor != nil {
		data, fromEditor, err := ReadText(ctx, env, ws, abs)
		if err != nil || fromEditor {
			return io.NopCloser(bytes.NewReader(data)), fromEditor, err
		}
	}
	f, err := ws.Open(abs)
	if err != nil {
		return nil, false, err
	}
	return f, false, nil
}

// WriteText writes data to the file at abs: through the editor when env
// has one that writes (after the workspace's write checks), else
// atomically to disk with perm. created reports a file that did not exist.
func WriteText(ctx context.Context, env *Env, ws *Workspace, abs string, data []byte, perm fs.FileMode) (created, viaEditor bool, err error) {
	if env != nil && env.Editor != nil {
		if _, _, err := ws.ResolveForWrite(abs); err != nil {
			return false, false, err
		}
		_, statErr := ws.Stat(abs)
		ok, err := env.Editor.WriteTextFile(ctx, abs, string(data))
		if err != nil {
			return false, false, &editorError{op: "write", err: err}
		}
		if ok {
			return errors.Is(statErr, fs.ErrNotExist), true, nil
		}
	}
	created, err = ws.WriteFileAtomic(abs, data, perm)
	return created, false, err
}

// editorError is a failure of the editor to read or write a file.
type editorError struct {
	op  string
	err error
}

func (e *editorError) Error() string {
	return "the editor could not " + e.op + " the file: " + e.err.Error()
}
func (e *editorError) Unwrap() error { return e.err }
