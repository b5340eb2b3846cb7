package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// step snapshots the whole workspace, runs change, snapshots again and
// returns the changes as records of message seq.
func (f *fixture) step(seq int64, change func()) []protocol.ChangeRecord {
	f.t.Helper()
	before := f.snapshot()
	change()
	return records(Diff(before, f.snapshot()), seq)
}

func (f *fixture) restore(recs []protocol.ChangeRecord, p Policy) Result {
	f.t.Helper()
	res, err := f.store.Restore(context.Background(), recs, p)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func TestRestoreEverythingKind(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and modes differ on Windows")
	}
	f := newFixture(t, Limits{})
	f.write("edit.txt", "one\n")
	f.write("gone.txt", "bye")
	f.write("old/name.txt", "moving")
	f.write("run.sh", "#!/bin/sh\n")
	f.write("flip", "a file")
	os.Symlink("edit.txt", f.abs("link"))
	recs := f.step(3, func() {
		f.write("edit.txt", "two\n")
		os.Remove(f.abs("gone.txt"))
		os.MkdirAll(f.abs("new/deeper"), 0o755)
		os.Rename(f.abs("old/name.txt"), f.abs("new/deeper/name.txt"))
		os.Remove(f.abs("old"))
		os.Chmod(f.abs("run.sh"), 0o700)
		os.Remove(f.abs("link"))
		os.Symlink("/etc/passwd", f.abs("link"))
		os.Remove(f.abs("flip"))
		os.MkdirAll(f.abs("flip"), 0o755)
	})
	// A second step changes edit.txt again: undoing both goes back to
	// the first state.
	recs = append(recs, f.step(5, func() { f.write("edit.txt", "three\n") })...)
	res := f.restore(recs, Leave)
	if len(res.Conflicts)+len(res.Failed) > 0 {
		t.Fatalf("result = %+v", res)
	}
	for rel, want := range map[string]string{"edit.txt": "one\n", "gone.txt": "bye", "old/name.txt": "moving", "flip": "a file"} {
		if got := f.read(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if f.exists("new") {
		t.Error("new/ (made by the step) is still there")
	}
	if fi, _ := os.Stat(f.abs("run.sh")); fi.Mode().Perm() != 0o644 {
		t.Errorf("run.sh mode = %v", fi.Mode())
	}
	if target, err := os.Readlink(f.abs("link")); err != nil || target != "edit.txt" {
		t.Errorf("link → %q, %v", target, err)
	}
	if len(res.Reverted) != len(recs) {
		t.Errorf("reverted %d of %d records", len(res.Reverted), len(recs))
	}
	// Everything is back: restoring again does nothing and still counts
	// each record as dealt with.
	again := f.restore(recs, Leave)
	if len(again.Restored) != 0 || len(again.Reverted) != len(recs) {
		t.Errorf("second restore = %+v", again)
	}
}

func TestRestoreConflicts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{})
	f.write("a.txt", "a1\n")
	f.write("b.txt", "line 1\nline 2\nline 3\nline 4\nline 5\n")
	f.write("c.txt", "c1\n")
	recs := f.step(2, func() {
		f.write("a.txt", "a2\n")
		f.write("b.txt", "line 1\nline 2 (agent)\nline 3\nline 4\nline 5\n")
		f.write("c.txt", "c2\n")
		f.write("made.txt", "agent's new file\n")
	})
	// The user edits after the agent.
	f.write("b.txt", "line 1\nline 2 (agent)\nline 3\nline 4\nline 5 (mine)\n")
	f.write("c.txt", "c3 mine\n")
	f.write("made.txt", "agent's new file, and mine\n")

	res := f.restore(recs, Leave)
	slices.Sort(res.Conflicts)
	if !slices.Equal(res.Conflicts, []string{"b.txt", "c.txt", "made.txt"}) || !slices.Equal(res.Restored, []string{"a.txt"}) {
		t.Fatalf("result = %+v", res)
	}
	if f.read("a.txt") != "a1\n" || f.read("c.txt") != "c3 mine\n" || f.read("made.txt") != "agent's new file, and mine\n" {
		t.Errorf("files: a=%q c=%q made=%q", f.read("a.txt"), f.read("c.txt"), f.read("made.txt"))
	}
	var conflictIDs []int64
	for _, r := range recs {
		if r.Path != "a.txt" {
			conflictIDs = append(conflictIDs, r.ID)
		}
	}
	for _, id := range conflictIDs {
		if slices.Contains(res.Reverted, id) {
			t.Errorf("conflicting record %d counted as reverted", id)
		}
	}

	if _, err := exec.LookPath("git"); err != nil {
		t.Log("git is not installed: merge not tested")
	} else {
		res = f.restore(recs, Merge)
		// b.txt merges cleanly: the agent's line goes, the user's stays.
		if got := f.read("b.txt"); got != "line 1\nline 2\nline 3\nline 4\nline 5 (mine)\n" {
			t.Errorf("merged b.txt = %q", got)
		}
		// c.txt's lines clash: conflict markers.
		if got := f.read("c.txt"); !strings.Contains(got, "<<<<<<< yours") || !strings.Contains(got, "c3 mine") || !strings.Contains(got, "c1") {
			t.Errorf("merged c.txt = %q", got)
		}
		if !slices.Equal(res.MergeConflicts, []string{"c.txt"}) || len(res.Merged) != 2 {
			t.Errorf("merge result = %+v", res)
		}
		// A file the agent created cannot be merged: still a conflict.
		if len(res.Conflicts) != 1 || !strings.HasPrefix(res.Conflicts[0], "made.txt (") {
			t.Errorf("conflicts after merge = %v", res.Conflicts)
		}
	}
	res = f.restore(recs, Keep)
	if !slices.Contains(res.Kept, "made.txt") || f.read("made.txt") != "agent's new file, and mine\n" {
		t.Errorf("keep: %+v, made.txt = %q", res, f.read("made.txt"))
	}
}

func TestRestoreNeverOutside(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	f := newFixture(t, Limits{})
	outside := t.TempDir()
	f.write("x", "x")
	m := f.snapshot()
	oid := m.Entries["x"].OID
	file := protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: oid}
	// A symlink inside the workspace that points outside it.
	if err := os.Symlink(outside, f.abs("escape")); err != nil {
		t.Fatal(err)
	}
	var recs []protocol.ChangeRecord
	for i, p := range []string{"../evil", "/abs/evil", ".git/hooks/pre-commit", "escape/evil", "a/../../evil", ""} {
		recs = append(recs, protocol.ChangeRecord{ID: int64(i + 1), MessageSeq: 1,
			FileChange: protocol.FileChange{Path: p, Before: file}})
	}
	res := f.restore(recs, Leave)
	if len(res.Restored) != 0 || len(res.Failed) != len(recs) {
		t.Errorf("result = %+v", res)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 {
		t.Errorf("written outside: %v", ents)
	}
	if f.exists(".git") {
		t.Error(".git was created")
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(f.root), "evil")); err == nil {
		t.Error("written next to the workspace")
	}
}

func TestRestoreUnsavedBefore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{MaxFileSize: 8})
	f.write("big.bin", "more than eight bytes")
	recs := f.step(1, func() { f.write("big.bin", "changed, and still more than eight") })
	if len(recs) != 1 || recs[0].Before.Saved() {
		t.Fatalf("records = %+v", recs)
	}
	if d := Describe([]protocol.FileChange{recs[0].FileChange}); !strings.Contains(d[0], "not saved") {
		t.Errorf("Describe = %v", d)
	}
	res := f.restore(recs, Leave)
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "not saved") {
		t.Errorf("result = %+v", res)
	}
}

func TestGC(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{})
	f.write("a.txt", "v1")
	recs := f.step(1, func() { f.write("a.txt", "v2") })
	f.write("a.txt", "v3")
	f.snapshot() // the index now knows v3 only
	keep := map[string]bool{recs[0].Before.OID: true}
	n, err := f.store.GC(keep, 0)
	if err != nil || n != 1 {
		t.Fatalf("GC removed %d, %v; want v2 only", n, err)
	}
	for _, text := range []string{"v1", "v3"} {
		if !f.store.obj.has(blobID([]byte(text))) {
			t.Errorf("%s was removed", text)
		}
	}
	if f.store.obj.has(blobID([]byte("v2"))) {
		t.Error("v2 was kept")
	}
}
