package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadNotes(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, "memory", "USER.md"), "- I use tabs.\n")
	writeFile(t, filepath.Join(home, "memory", "MEMORY.md"), strings.Repeat("- a long line of notes\n", 600))
	writeFile(t, filepath.Join(ws, ".mx-claw", "MEMORY.md"), "- This repo uses make.\n")

	notes, warnings := LoadNotes(NoteOptions{Home: home, Workspace: ws, Trusted: false})
	if len(notes) != 2 || notes[0].Label != "USER.md" || notes[0].Text != "- I use tabs." || notes[1].Label != "MEMORY.md" {
		t.Fatalf("untrusted: %+v", notes)
	}
	if !notes[1].Cut || len(notes[1].Text) > DefaultNoteBytes+200 || !strings.Contains(notes[1].Text, "[mx-claw: the rest of this file was cut") {
		t.Errorf("MEMORY.md not cut to 8 KiB: cut %v, %d bytes", notes[1].Cut, len(notes[1].Text))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "MEMORY.md is 13800 bytes; only its first") {
		t.Errorf("warnings %q", warnings)
	}
	notes, _ = LoadNotes(NoteOptions{Home: home, Workspace: ws, Trusted: true})
	if len(notes) != 3 || notes[2].Label != ".mx-claw/MEMORY.md" || notes[2].Text != "- This repo uses make." || notes[2].SHA256 == "" {
		t.Fatalf("trusted: %+v", notes)
	}

	// A project's memory that is a link out of it is refused.
	ws2 := t.TempDir()
	writeFile(t, filepath.Join(t.TempDir(), "x"), "")
	if err := os.MkdirAll(filepath.Join(ws2, ".mx-claw"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "memory", "USER.md"), filepath.Join(ws2, ".mx-claw", "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	notes, warnings = LoadNotes(NoteOptions{Workspace: ws2, Trusted: true})
	if len(notes) != 0 || len(warnings) != 1 || !strings.Contains(warnings[0], "symbolic link") {
		t.Errorf("linked project memory: %+v %q", notes, warnings)
	}
}

func TestCandidates(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	c := Candidates{Home: home}
	added, err := c.Add(
		Candidate{File: UserFile, Text: "I use tabs.", Quote: "remember that I use tabs", SessionID: "s1", MessageSeq: 2, Workspace: ws},
		Candidate{File: NotesFile, Text: "Run make test.", Quote: "always run make test", SessionID: "s1", Workspace: ws},
		Candidate{File: UserFile, Text: "i use  tabs", SessionID: "s1"}, // the same as the first
	)
	if err != nil || len(added) != 2 {
		t.Fatalf("added %+v, %v", added, err)
	}
	list, warnings := c.List()
	if len(list) != 2 || list[0].ID != added[0].ID || list[0].Quote != "remember that I use tabs" || list[0].MessageSeq != 2 || len(warnings) > 0 {
		t.Fatalf("list %+v %v", list, warnings)
	}
	// Candidates are never memory: nothing is in the files yet.
	if notes, _ := LoadNotes(NoteOptions{Home: home}); len(notes) != 0 {
		t.Fatalf("a candidate is in memory before it is accepted: %+v", notes)
	}
	path, err := c.Accept(added[0].ID)
	if err != nil || path != filepath.Join(home, "memory", "USER.md") {
		t.Fatalf("accept: %q %v", path, err)
	}
	if notes, _ := LoadNotes(NoteOptions{Home: home}); len(notes) != 1 || notes[0].Text != "- I use tabs." {
		t.Fatalf("after accept: %+v", notes)
	}
	if _, err := c.Accept(added[0].ID); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("accept twice: %v", err)
	}
	// Already kept: not proposed again.
	if again, _ := c.Add(Candidate{File: UserFile, Text: "I use tabs."}); len(again) != 0 {
		t.Errorf("a kept text was added again: %+v", again)
	}
	edited, err := c.Edit(added[1].ID, "Run make check before pushing.", "project")
	if err != nil || edited.File != ProjectFile || edited.Text != "Run make check before pushing." {
		t.Fatalf("edit: %+v %v", edited, err)
	}
	if path, err = c.Accept(added[1].ID); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".mx-claw", "MEMORY.md")); string(data) != "- Run make check before pushing.\n" || path != filepath.Join(ws, ".mx-claw", "MEMORY.md") {
		t.Errorf("project memory %q at %s", data, path)
	}
	third, _ := c.Add(Candidate{File: NotesFile, Text: "Something else."})
	if err := c.Reject(third[0].ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.List(); len(list) != 0 {
		t.Errorf("left: %+v", list)
	}
	for _, bad := range []string{"../x", "", "M1"} {
		if _, err := c.Get(bad); !errors.Is(err, ErrNoCandidate) {
			t.Errorf("Get(%q): %v", bad, err)
		}
	}
	if _, err := c.Edit("mzzzzzz", "x", ""); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("edit unknown: %v", err)
	}
}
