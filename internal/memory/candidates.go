package memory

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Candidates waiting for a person. Each is one JSON file under
// $MX_CLAW_HOME/memory/candidates/, named by its id, written aside and
// renamed into place; accepting one appends its text to its memory file
// (written the same way) and removes it. Files, not database rows: the
// memory belongs to the Markdown files a person can read and edit, and a
// candidate is a note beside them.

// CandidatesDir is the folder of candidates inside the memory folder.
const CandidatesDir = "candidates"

// ErrNoCandidate is matched by the error for a candidate id that does not
// exist.
var ErrNoCandidate = errors.New("no such memory candidate")

// Candidate is a request to remember, waiting for a person.
type Candidate struct {
	ID string `json:"id"`
	// File is where it goes once accepted: UserFile, NotesFile or
	// ProjectFile (the workspace's own memory).
	File string `json:"file"`
	// Text is the line to add.
	Text string `json:"text"`
	// Quote is the user's sentence it came from.
	Quote string `json:"quote"`
	// Provenance: the session, its message and its workspace, and when.
	SessionID  string    `json:"sessionId"`
	MessageSeq int64     `json:"messageSeq,omitempty"`
	Workspace  string    `json:"workspace,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}

// Candidates is the candidate list of a home directory.
type Candidates struct {
	// Home is $MX_CLAW_HOME.
	Home string
}

func (c Candidates) dir() string           { return filepath.Join(c.Home, Dir, CandidatesDir) }
func (c Candidates) memDir() string        { return filepath.Join(c.Home, Dir) }
func (c Candidates) path(id string) string { return filepath.Join(c.dir(), id+".json") }

// Add stores new candidates and returns those stored, with their ids. A
// candidate whose text is already pending, or already in its memory file,
// is not stored again.
func (c Candidates) Add(cands ...Candidate) ([]Candidate, error) {
	pending, _ := c.List()
	var out []Candidate
	for _, cand := range cands {
		dup := false
		for _, p := range pending {
			dup = dup || normalize(p.Text) == normalize(cand.Text)
		}
		if dup || c.alreadyKept(cand) {
			continue
		}
		cand.ID = newCandidateID()
		if cand.CreatedAt.IsZero() {
			cand.CreatedAt = time.Now().UTC()
		}
		data, err := json.MarshalIndent(cand, "", "  ")
		if err != nil {
			return out, err
		}
		if err := os.MkdirAll(c.dir(), 0o700); err != nil {
			return out, err
		}
		if err := writeAtomic(c.path(cand.ID), append(data, '\n')); err != nil {
			return out, err
		}
		pending = append(pending, cand)
		out = append(out, cand)
	}
	return out, nil
}

// alreadyKept reports whether the candidate's memory file holds its text.
func (c Candidates) alreadyKept(cand Candidate) bool {
	path, err := c.target(cand)
	if err != nil {
		return false
	}
	data, err := safefile.ReadFile(path, maxNoteFile)
	if err != nil {
		return false
	}
	return strings.Contains(normalize(string(data)), normalize(cand.Text))
}

// List returns the pending candidates, oldest first, and warnings for
// files that cannot be read.
func (c Candidates) List() ([]Candidate, []string) {
	entries, err := os.ReadDir(c.dir())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{err.Error()}
	}
	var out []Candidate
	var warnings []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		cand, err := c.Get(id)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		out = append(out, cand)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, warnings
}

// Get returns one candidate.
func (c Candidates) Get(id string) (Candidate, error) {
	if !validID(id) {
		return Candidate{}, fmt.Errorf("%w: %q", ErrNoCandidate, id)
	}
	data, err := safefile.ReadFile(c.path(id), 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return Candidate{}, fmt.Errorf("%w: %s", ErrNoCandidate, id)
	}
	if err != nil {
		return Candidate{}, err
	}
	var cand Candidate
	if err := json.Unmarshal(data, &cand); err != nil {
		return Candidate{}, fmt.Errorf("memory candidate %s is damaged: %v", id, err)
	}
	cand.ID = id
	return cand, nil
}

// Edit changes a candidate's text and, if file is not empty, the memory
// file it goes to (UserFile, NotesFile or ProjectFile).
func (c Candidates) Edit(id, text, file string) (Candidate, error) {
	cand, err := c.Get(id)
	if err != nil {
		return cand, err
	}
	if t := strings.TrimSpace(text); t != "" {
		if strings.ContainsAny(t, "\n\r") {
			return cand, errors.New("a memory line cannot hold line breaks")
		}
		cand.Text = t
	}
	if file != "" {
		f, err := ParseFile(file)
		if err != nil {
			return cand, err
		}
		if f == ProjectFile && cand.Workspace == "" {
			return cand, errors.New("the candidate names no workspace, so it cannot go to a project's memory")
		}
		cand.File = f
	}
	data, err := json.MarshalIndent(cand, "", "  ")
	if err != nil {
		return cand, err
	}
	return cand, writeAtomic(c.path(id), append(data, '\n'))
}

// ParseFile reads a memory file name as a person types it: "user",
// "USER.md", "memory", "MEMORY.md", "project".
func ParseFile(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "user", "user.md":
		return UserFile, nil
	case "memory", "memory.md", "notes":
		return NotesFile, nil
	case "project", ".mx-claw/memory.md":
		return ProjectFile, nil
	}
	return "", fmt.Errorf("memory file %q: want user (USER.md), memory (MEMORY.md) or project (.mx-claw/MEMORY.md)", s)
}

// Accept adds a candidate's text to its memory file, as a list item at
// the end, and removes the candidate. The file is written whole, aside
// and renamed, so a reader sees the old or the new file, never half of
// one. It returns the file written.
func (c Candidates) Accept(id string) (string, error) {
	cand, err := c.Get(id)
	if err != nil {
		return "", err
	}
	path, err := c.target(cand)
	if err != nil {
		return "", err
	}
	old, err := safefile.ReadFile(path, maxNoteFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("- " + cand.Text + "\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := writeAtomic(path, b.Bytes()); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Remove(c.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, err
	}
	return path, nil
}

// Reject removes a candidate.
func (c Candidates) Reject(id string) error {
	if _, err := c.Get(id); err != nil {
		return err
	}
	return os.Remove(c.path(id))
}

// target returns the memory file a candidate goes to. A project's memory
// must be a real file in a real .mx-claw folder of the workspace: no
// symbolic link on the way.
func (c Candidates) target(cand Candidate) (string, error) {
	switch cand.File {
	case UserFile, NotesFile:
		return filepath.Join(c.memDir(), cand.File), nil
	case ProjectFile:
		if cand.Workspace == "" {
			return "", errors.New("no workspace for the project's memory")
		}
		dir := filepath.Join(cand.Workspace, ".mx-claw")
		for _, p := range []string{dir, filepath.Join(dir, "MEMORY.md")} {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", fmt.Errorf("%s is a symbolic link; mx-claw does not write through it", p)
			}
		}
		return filepath.Join(dir, "MEMORY.md"), nil
	}
	return "", fmt.Errorf("unknown memory file %q", cand.File)
}

// writeAtomic replaces path with data: written to a temporary file in the
// same folder, synced, then renamed over it. The file is private (0600).
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// newCandidateID returns a short id a person can type: "m" and six hex
// digits.
func newCandidateID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "m" + hex.EncodeToString(b[:])
}

func validID(id string) bool {
	if len(id) < 2 || len(id) > 32 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
