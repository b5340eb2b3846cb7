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
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// fixture is a workspace and its checkpoint store.
type fixture struct {
	t     *testing.T
	root  string
	store *Store
}

func newFixture(t *testing.T, lim Limits) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(filepath.Join(t.TempDir(), "checkpoints"), lim, nil)
	t.Cleanup(func() { m.Close() })
	s, err := m.For(root)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, root: root, store: s}
}

func (f *fixture) abs(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *fixture) write(rel, text string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.abs(rel)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.abs(rel), []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	b, err := os.ReadFile(f.abs(rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func (f *fixture) exists(rel string) bool {
	_, err := os.Lstat(f.abs(rel))
	return err == nil
}

func (f *fixture) snapshot() *Manifest {
	f.t.Helper()
	m, err := f.store.Snapshot(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// records turns changes into unreverted change records, as the store
// would return them.
func records(changes []protocol.FileChange, seq int64) []protocol.ChangeRecord {
	out := make([]protocol.ChangeRecord, len(changes))
	for i, c := range changes {
		out[i] = protocol.ChangeRecord{ID: seq*1000 + int64(i), MessageSeq: seq, FileChange: c}
	}
	return out
}

func kinds(changes []protocol.FileChange) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Kind()+" "+c.Path)
	}
	return out
}

func TestSnapshotDiff(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and modes differ on Windows")
	}
	f := newFixture(t, Limits{MaxFileSize: 1 << 10})
	f.write(".gitignore", "build/\n*.log\n")
	f.write("keep.txt", "keep")
	f.write("edit.txt", "one\n")
	f.write("gone.txt", "bye")
	f.write("old/name.txt", "moving")
	f.write("run.sh", "#!/bin/sh\n")
	f.write("build/out.bin", "ignored")
	f.write("app.log", "ignored too")
	f.write("big.dat", strings.Repeat("x", 2<<10))
	f.write(".git/config", "[core]\n")
	if err := os.Symlink("keep.txt", f.abs("link")); err != nil {
		t.Fatal(err)
	}
	before := f.snapshot()
	for _, p := range []string{"build/out.bin", "app.log", ".git/config", ".git", "build"} {
		if _, ok := before.Entries[p]; ok {
			t.Errorf("snapshot holds %s", p)
		}
	}
	if sk := before.Skipped(); len(sk) != 1 || !strings.HasPrefix(sk[0], "big.dat (2.0 KiB, over the 1.0 KiB limit") {
		t.Errorf("skipped = %v", sk)
	}
	if e := before.Entries["link"]; e.Mode != protocol.ModeSymlink || e.OID != blobID([]byte("keep.txt")) {
		t.Errorf("link = %+v", e)
	}

	f.write("edit.txt", "two\n")
	os.Remove(f.abs("gone.txt"))
	os.MkdirAll(f.abs("new"), 0o755)
	os.Rename(f.abs("old/name.txt"), f.abs("new/name.txt"))
	os.Remove(f.abs("old"))
	os.Chmod(f.abs("run.sh"), 0o755)
	f.write("made.txt", "fresh")
	f.write("build/out.bin", "ignored, changed")
	os.Remove(f.abs("link"))
	os.Symlink("edit.txt", f.abs("link"))
	after := f.snapshot()

	got := kinds(Diff(before, after))
	want := []string{"deleted gone.txt", "modified edit.txt", "modified link", "created made.txt",
		"created new", "created new/name.txt", "deleted old", "deleted old/name.txt", "mode run.sh"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("diff = %v\nwant   %v", got, want)
	}
	desc := strings.Join(Describe(Diff(before, after)), "\n")
	for _, w := range []string{"renamed old/name.txt → new/name.txt", "mode run.sh (644 → 755)", "created new/", "deleted old/"} {
		if !strings.Contains(desc, w) {
			t.Errorf("Describe lacks %q:\n%s", w, desc)
		}
	}
	if strings.Contains(desc, "created new/name.txt") {
		t.Errorf("a rename is also listed as a creation:\n%s", desc)
	}
	if s := Summary(Diff(before, after)); s != "7 files changed" {
		t.Errorf("Summary = %q", s)
	}
}

func TestSnapshotStatCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{NoWatch: true})
	for _, p := range []string{"a.txt", "b.txt", "c/d.txt"} {
		f.write(p, p)
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	f.snapshot()
	if n := f.store.reads.Load(); n != 3 {
		t.Errorf("first snapshot read %d files, want 3", n)
	}
	f.snapshot()
	if n := f.store.reads.Load(); n != 3 {
		t.Errorf("an unchanged workspace was read again: %d reads in all", n)
	}
	f.write("b.txt", "changed")
	m := f.snapshot()
	if n := f.store.reads.Load(); n != 4 {
		t.Errorf("%d reads in all, want 4 (only b.txt again)", n)
	}
	if m.Entries["b.txt"].OID != blobID([]byte("changed")) {
		t.Errorf("b.txt = %+v", m.Entries["b.txt"])
	}
	// b.txt changed just now: it is racy, so the next snapshot reads it
	// again rather than trust its times.
	if !m.Entries["b.txt"].Racy {
		t.Errorf("b.txt not racy: %+v", m.Entries["b.txt"])
	}
	f.snapshot()
	if n := f.store.reads.Load(); n != 5 {
		t.Errorf("%d reads in all, want 5", n)
	}
}

func TestSnapshotIndexAcrossProcesses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{})
	f.write("a.txt", "alpha")
	f.write("b.txt", "beta")
	time.Sleep(racyWindow + 50*time.Millisecond)
	f.snapshot()
	if err := f.store.Flush(); err != nil {
		t.Fatal(err)
	}
	// Another process opens the same store: it trusts the saved index,
	// except for an entry whose blob was removed behind its back.
	if err := os.Remove(f.store.obj.path(blobID([]byte("alpha")))); err != nil {
		t.Fatal(err)
	}
	other, err := openStore(f.store.dir, f.root, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Closed before its directory goes: its index is saved in the background.
	t.Cleanup(func() { other.Close() })
	m, err := other.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := other.reads.Load(); n != 1 {
		t.Errorf("the other process read %d files, want 1 (a.txt)", n)
	}
	if !other.obj.has(m.Entries["a.txt"].OID) {
		t.Error("a.txt's blob was not saved again")
	}
}

func TestObjectsReadableByGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: cannot check the objects are git's")
	}
	f := newFixture(t, Limits{})
	f.write("a.txt", "hello\n")
	m := f.snapshot()
	oid := m.Entries["a.txt"].OID
	// git's own id for the same contents.
	cmd := exec.Command(git, "hash-object", "--stdin")
	cmd.Stdin = strings.NewReader("hello\n")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != oid {
		t.Fatalf("git hash-object = %q, %v; want %s", out, err, oid)
	}
	out, err = exec.Command(git, "--git-dir", f.store.Dir(), "cat-file", "-p", oid).Output()
	if err != nil || string(out) != "hello\n" {
		t.Errorf("git cat-file = %q, %v", out, err)
	}
}

func TestSnapshotTooManyFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{MaxFiles: 3})
	for _, p := range []string{"a", "b", "c", "d"} {
		f.write(p, p)
	}
	if _, err := f.store.Snapshot(context.Background()); err == nil || !strings.Contains(err.Error(), "too many files") {
		t.Errorf("err = %v", err)
	}
}

func TestSnapshotPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{})
	f.write(".gitignore", "secret.env\n")
	f.write("secret.env", "A=1")
	ctx := context.Background()
	paths := []string{"secret.env", "deep/new/file.txt", "../outside", ".git/config", "/abs"}
	before, err := f.store.SnapshotPaths(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	f.write("secret.env", "A=2")
	f.write("deep/new/file.txt", "made")
	after, err := f.store.SnapshotPaths(ctx, paths)
	if err != nil {
		t.Fatal(err)
	}
	got := kinds(Diff(before, after))
	want := []string{"created deep", "created deep/new", "created deep/new/file.txt", "modified secret.env"}
	if !slices.Equal(got, want) {
		t.Errorf("diff = %v, want %v", got, want)
	}
}

func TestSnapshotWatch(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's: elsewhere every snapshot walks")
	}
	f := newFixture(t, Limits{})
	f.write(".gitignore", "*.log\n")
	for _, p := range []string{"a.txt", "b.txt", "d/c.txt", "run.sh"} {
		f.write(p, p)
	}
	base := f.snapshot()
	if f.store.watch == nil {
		t.Fatal("no watcher after the first snapshot")
	}
	reads := f.store.reads.Load()
	step := func(change func()) ([]string, int64) {
		t.Helper()
		before := f.snapshot()
		r0 := f.store.reads.Load()
		change()
		after := f.snapshot()
		return kinds(Diff(before, after)), f.store.reads.Load() - r0
	}
	// Nothing changed: nothing is read, and the snapshot is the last one.
	if again := f.snapshot(); f.store.reads.Load() != reads || len(Diff(base, again)) != 0 {
		t.Errorf("an unchanged workspace was read: %d reads", f.store.reads.Load()-reads)
	}
	cases := []struct {
		name   string
		change func()
		want   []string
		reads  int64
		full   bool
	}{
		{"modify", func() { f.write("d/c.txt", "changed") }, []string{"modified d/c.txt"}, 1, false},
		{"create", func() { f.write("new.txt", "new") }, []string{"created new.txt"}, 1, false},
		{"remove", func() { os.Remove(f.abs("a.txt")) }, []string{"deleted a.txt"}, 0, false},
		{"rename", func() { os.Rename(f.abs("b.txt"), f.abs("d/b2.txt")) }, []string{"created d/b2.txt", "deleted b.txt"}, 1, false},
		{"chmod", func() { os.Chmod(f.abs("run.sh"), 0o755) }, []string{"mode run.sh"}, 1, false},
		{"ignored", func() { f.write("x.log", "noise") }, nil, 0, false},
		{"mkdir", func() { f.write("e/f/g.txt", "deep") }, []string{"created e", "created e/f", "created e/f/g.txt"}, 1, true},
		{"gitignore", func() { f.write(".gitignore", "*.log\n*.sh\n") }, []string{"deleted run.sh", "modified .gitignore"}, 1, true},
	}
	for _, c := range cases {
		got, n := step(c.change)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: diff = %v, want %v", c.name, got, c.want)
		}
		if !c.full && n != c.reads {
			t.Errorf("%s: %d files read, want %d (the rest not looked at)", c.name, n, c.reads)
		}
	}
	// The watched result matches a walk of the same workspace.
	walked, err := openStore(t.TempDir(), f.root, Limits{NoWatch: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Closed before its directory goes: its index is saved in the background.
	t.Cleanup(func() { walked.Close() })
	w, err := walked.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(f.snapshot(), w); len(d) != 0 {
		t.Errorf("watched and walked snapshots differ: %v", kinds(d))
	}
}
