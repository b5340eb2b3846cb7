package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Long-term memory (DESIGN §9): Markdown files a person keeps for the
// model, frozen into a new session's system prompt. USER.md is about the
// person, MEMORY.md holds facts and conventions; a trusted workspace may
// add its own .mx-claw/MEMORY.md.

// Memory file names and the folder of the home ones.
const (
	// Dir is the folder under $MX_CLAW_HOME holding the memory files and
	// the candidates waiting for review.
	Dir = "memory"
	// UserFile is about the person: how they work, what they prefer.
	UserFile = "USER.md"
	// NotesFile holds facts and conventions.
	NotesFile = "MEMORY.md"
	// ProjectFile is a workspace's own memory, relative to its root.
	ProjectFile = ".mx-claw/MEMORY.md"
)

// DefaultNoteBytes caps each memory file in a prompt: 8 KiB, about 2,000
// tokens. A longer file is cut, with a warning.
const DefaultNoteBytes = 8 << 10

// maxNoteFile caps a memory file read at all.
const maxNoteFile = 1 << 20

// Note is one memory file as a session's prompt holds it.
type Note struct {
	// Label names the file for the model and the person: "USER.md",
	// "MEMORY.md" or ".mx-claw/MEMORY.md".
	Label string
	// Path is the file's absolute path.
	Path string
	// Text is what the prompt holds: the file, or its beginning with a
	// marker when it was cut.
	Text string
	// Size is the file's size in bytes; Cut says Text holds only its
	// beginning.
	Size int64
	Cut  bool
	// SHA256 is the hex digest of the whole file, to tell later which
	// version a session was frozen with.
	SHA256 string
}

// NoteOptions say where to find memory files.
type NoteOptions struct {
	// Home is $MX_CLAW_HOME; its memory/ folder holds USER.md and
	// MEMORY.md.
	Home string
	// Workspace, with Trusted, adds the workspace's .mx-claw/MEMORY.md.
	// A workspace the user has not trusted has no say in the prompt.
	Workspace string
	Trusted   bool
	// MaxBytes caps each file in the prompt; DefaultNoteBytes if zero.
	MaxBytes int
}

// LoadNotes reads the memory files that apply: USER.md, MEMORY.md, then
// the trusted workspace's .mx-claw/MEMORY.md. Missing and empty files are
// left out silently; a file that cannot be read (not a regular file,
// over 1 MiB, a symbolic link in the workspace) is left out with a
// warning; a file over the cap is cut with a warning.
func LoadNotes(o NoteOptions) ([]Note, []string) {
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultNoteBytes
	}
	var notes []Note
	var warnings []string
	add := func(label, path string, data []byte, err error) {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("memory file %s is not used: %v", label, err))
			return
		}
		body := strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n"))
		if body == "" {
			return
		}
		sum := sha256.Sum256(data)
		n := Note{Label: label, Path: path, Text: body, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
		if len(body) > maxBytes {
			kept := cut(body, maxBytes)
			n.Text, n.Cut = kept+cutMarker(len(kept), n.Size), true
			warnings = append(warnings, fmt.Sprintf("memory file %s is %d bytes; only its first %d bytes are in the session's prompt (keep it under %d KiB)",
				label, n.Size, len(kept), maxBytes>>10))
		}
		notes = append(notes, n)
	}
	if o.Home != "" {
		for _, name := range []string{UserFile, NotesFile} {
			p := filepath.Join(o.Home, Dir, name)
			data, err := safefile.ReadFile(p, maxNoteFile)
			add(name, p, data, err)
		}
	}
	if o.Workspace != "" && o.Trusted {
		data, err := safefile.ReadInTree(o.Workspace, filepath.FromSlash(ProjectFile), maxNoteFile)
		add(ProjectFile, filepath.Join(o.Workspace, filepath.FromSlash(ProjectFile)), data, err)
	}
	return notes, warnings
}
