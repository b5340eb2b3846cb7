package memory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tempDir returns a canonical temporary directory.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write creates path with content, and its parent directories.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// load calls Load and fails the test on error.
func load(t *testing.T, ws, home string, opts Options) Context {
	t.Helper()
	c, err := Load(ws, home, opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", ws, err)
	}
	return c
}

// repo makes a repository (a .git directory) under a fresh temporary
// directory, with an AGENTS.md above it that must never be read, and
// returns the repository root.
func repo(t *testing.T) string {
	t.Helper()
	parent := tempDir(t)
	write(t, filepath.Join(parent, FileName), "OUTSIDE THE REPOSITORY")
	root := filepath.Join(parent, "repo")
	mkdir(t, filepath.Join(root, ".git"))
	return root
}

func TestLoadNested(t *testing.T) {
	t.Parallel()
	root := repo(t)
	write(t, filepath.Join(root, FileName), "root rules\n")
	write(t, filepath.Join(root, "a", FileName), "  a rules\n\n")
	ws := filepath.Join(root, "a", "b", "ws")
	write(t, filepath.Join(ws, FileName), "ws rules")
	mkdir(t, filepath.Join(root, "a", "b")) // b has no AGENTS.md

	got := load(t, ws, "", Options{})
	want := "# AGENTS.md from ../../../AGENTS.md\n\nroot rules\n" +
		"\n# AGENTS.md from ../../AGENTS.md\n\na rules\n" +
		"\n# AGENTS.md from AGENTS.md\n\nws rules\n"
	if got.Text != want {
		t.Errorf("Text =\n%s\nwant\n%s", got.Text, want)
	}
	wantFiles := []string{
		filepath.Join(root, FileName),
		filepath.Join(root, "a", FileName),
		filepath.Join(ws, FileName),
	}
	if !slices.Equal(got.Files, wantFiles) {
		t.Errorf("Files = %q, want %q", got.Files, wantFiles)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("Warnings = %q", got.Warnings)
	}

	// A workspace without its own file still gets its ancestors'.
	sub := filepath.Join(ws, "deeper")
	mkdir(t, sub)
	if got := load(t, sub, "", Options{}); len(got.Files) != 3 || !strings.HasPrefix(got.Text, "# AGENTS.md from ../../../../AGENTS.md\n") {
		t.Errorf("from a subdirectory: Files %q, Text %q", got.Files, got.Text)
	}
	// The repository root as the workspace: its own file only.
	if got := load(t, root, "", Options{}); got.Text != "# AGENTS.md from AGENTS.md\n\nroot rules\n" {
		t.Errorf("at the root: Text %q", got.Text)
	}
}

func TestLoadOutsideRepo(t *testing.T) {
	t.Parallel()
	parent := tempDir(t)
	for d := parent; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			t.Skipf("the temporary directory is inside a repository (%s)", d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	write(t, filepath.Join(parent, FileName), "parent rules")
	ws := filepath.Join(parent, "ws")
	write(t, filepath.Join(ws, FileName), "ws rules")
	got := load(t, ws, "", Options{})
	if got.Text != "# AGENTS.md from AGENTS.md\n\nws rules\n" {
		t.Errorf("Text = %q; only the workspace's own file should count", got.Text)
	}
	// No file at all: empty, no error.
	empty := filepath.Join(parent, "empty")
	mkdir(t, empty)
	if got := load(t, empty, "", Options{}); got.Text != "" || got.Files != nil || got.Warnings != nil {
		t.Errorf("empty workspace gave %+v", got)
	}
}

// TestLoadGitFile checks a worktree, whose .git is a file.
func TestLoadGitFile(t *testing.T) {
	t.Parallel()
	parent := tempDir(t)
	write(t, filepath.Join(parent, FileName), "OUTSIDE")
	root := filepath.Join(parent, "wt")
	write(t, filepath.Join(root, ".git"), "gitdir: /elsewhere/.git/worktrees/wt\n")
	write(t, filepath.Join(root, FileName), "worktree rules")
	ws := filepath.Join(root, "pkg")
	write(t, filepath.Join(ws, FileName), "pkg rules")
	got := load(t, ws, "", Options{})
	want := "# AGENTS.md from ../AGENTS.md\n\nworktree rules\n\n# AGENTS.md from AGENTS.md\n\npkg rules\n"
	if got.Text != want {
		t.Errorf("Text = %q, want %q", got.Text, want)
	}
}

func TestLoadSymlinkedWorkspace(t *testing.T) {
	t.Parallel()
	root := repo(t)
	write(t, filepath.Join(root, FileName), "root rules")
	ws := filepath.Join(root, "svc")
	write(t, filepath.Join(ws, FileName), "svc rules")
	elsewhere := tempDir(t)
	link := filepath.Join(elsewhere, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	got := load(t, link, "", Options{})
	want := "# AGENTS.md from ../AGENTS.md\n\nroot rules\n\n# AGENTS.md from AGENTS.md\n\nsvc rules\n"
	if got.Text != want {
		t.Errorf("Text = %q, want %q", got.Text, want)
	}
	if want := []string{filepath.Join(root, FileName), filepath.Join(ws, FileName)}; !slices.Equal(got.Files, want) {
		t.Errorf("Files = %q, want canonical %q", got.Files, want)
	}
}

// TestLoadSameFileTwice checks that a file reached by two paths is merged
// once, at its innermost place.
func TestLoadSameFileTwice(t *testing.T) {
	t.Parallel()
	root := repo(t)
	shared := filepath.Join(root, "docs", "agents.md")
	write(t, shared, "shared rules")
	ws := filepath.Join(root, "svc")
	mkdir(t, ws)
	home := filepath.Join(tempDir(t), "home")
	mkdir(t, home)
	for _, l := range []string{filepath.Join(root, FileName), filepath.Join(ws, FileName), filepath.Join(home, FileName)} {
		if err := os.Symlink(shared, l); err != nil {
			t.Skipf("symlinks unsupported: %v", err)
		}
	}
	got := load(t, ws, home, Options{})
	if got.Text != "# AGENTS.md from AGENTS.md\n\nshared rules\n" {
		t.Errorf("Text = %q", got.Text)
	}
	if !slices.Equal(got.Files, []string{shared}) {
		t.Errorf("Files = %q", got.Files)
	}
}

// TestLoadHome is not parallel: it sets $HOME.
func TestLoadHome(t *testing.T) {
	user := tempDir(t)
	t.Setenv("HOME", user)
	home := filepath.Join(user, ".mx-claw")
	write(t, filepath.Join(home, FileName), "home rules")
	root := repo(t)
	write(t, filepath.Join(root, FileName), "root rules")

	got := load(t, root, home, Options{})
	want := "# AGENTS.md from ~/.mx-claw/AGENTS.md\n\nhome rules\n\n# AGENTS.md from AGENTS.md\n\nroot rules\n"
	if got.Text != want {
		t.Errorf("Text = %q, want %q", got.Text, want)
	}
	if want := []string{filepath.Join(home, FileName), filepath.Join(root, FileName)}; !slices.Equal(got.Files, want) {
		t.Errorf("Files = %q, want %q", got.Files, want)
	}

	// A home outside the user's directory is named by its path.
	other := filepath.Join(tempDir(t), "mxhome")
	write(t, filepath.Join(other, FileName), "other home")
	got = load(t, root, other, Options{})
	if !strings.HasPrefix(got.Text, "# AGENTS.md from "+filepath.ToSlash(filepath.Join(other, FileName))+"\n\nother home\n") {
		t.Errorf("Text = %q", got.Text)
	}

	// A home without the file, or no home, adds nothing.
	for _, h := range []string{filepath.Join(user, "missing"), ""} {
		if got := load(t, root, h, Options{}); got.Text != "# AGENTS.md from AGENTS.md\n\nroot rules\n" || len(got.Warnings) != 0 {
			t.Errorf("home %q: %+v", h, got)
		}
	}
}

func TestLoadSizeCap(t *testing.T) {
	t.Parallel()
	root := repo(t)
	line := strings.Repeat("x", 59) + "\n" // 60 bytes
	outer := "outer\n" + strings.Repeat(line, 50)
	middle := "middle\n" + strings.Repeat(line, 50)
	inner := "inner\n" + strings.Repeat(line, 50)
	write(t, filepath.Join(root, FileName), outer)
	write(t, filepath.Join(root, "m", FileName), middle)
	ws := filepath.Join(root, "m", "ws")
	write(t, filepath.Join(ws, FileName), inner)

	got := load(t, ws, "", Options{MaxBytes: 5000})
	if len(got.Text) > 5000 {
		t.Errorf("Text is %d bytes, over the cap", len(got.Text))
	}
	if !strings.HasSuffix(got.Text, "# AGENTS.md from AGENTS.md\n\n"+strings.TrimSpace(inner)+"\n") {
		t.Errorf("the workspace's file is not whole at the end:\n%s", got.Text)
	}
	if !strings.HasPrefix(got.Text, "# AGENTS.md from ../AGENTS.md\n\nmiddle\n") || !strings.Contains(got.Text, "[mx-claw: the rest of this file was cut;") {
		t.Errorf("the middle file is not first and cut:\n%s", got.Text)
	}
	if strings.Contains(got.Text, "outer") {
		t.Errorf("the outermost file should be left out")
	}
	if want := []string{filepath.Join(root, "m", FileName), filepath.Join(ws, FileName)}; !slices.Equal(got.Files, want) {
		t.Errorf("Files = %q, want %q", got.Files, want)
	}
	if len(got.Warnings) != 2 ||
		!strings.Contains(got.Warnings[0], "../AGENTS.md was cut to its first") ||
		!strings.Contains(got.Warnings[1], "../../AGENTS.md (3006 bytes) was left out") {
		t.Errorf("Warnings = %q", got.Warnings)
	}

	// Every cap holds, whatever it is.
	for c := 1; c < 10_000; c += 97 {
		got := load(t, ws, "", Options{MaxBytes: c})
		if len(got.Text) > c {
			t.Fatalf("cap %d: Text is %d bytes", c, len(got.Text))
		}
		if len(got.Files) < 3 && len(got.Warnings) == 0 {
			t.Fatalf("cap %d: files left out without a warning", c)
		}
	}

	// Under the default cap all three fit.
	if got := load(t, ws, "", Options{}); len(got.Files) != 3 || len(got.Warnings) != 0 {
		t.Errorf("default cap: %d files, warnings %q", len(got.Files), got.Warnings)
	}
}

// TestLoadHugeFile checks a single file larger than the cap: only the
// beginning is read, and it is cut with a warning.
func TestLoadHugeFile(t *testing.T) {
	t.Parallel()
	ws := tempDir(t)
	huge := "# Rules\n" + strings.Repeat("never touch vendor/ please\n", 10_000) // ~270 KB
	write(t, filepath.Join(ws, FileName), huge)
	fsys := &countingFS{}
	got := load(t, ws, "", Options{MaxBytes: 4096, FS: fsys})
	if len(got.Text) > 4096 || !strings.Contains(got.Text, "# Rules\nnever touch vendor/ please\n") {
		t.Errorf("Text (%d bytes) = %.200q", len(got.Text), got.Text)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "of 270008 bytes") {
		t.Errorf("Warnings = %q", got.Warnings)
	}
	if n := fsys.bytes.Load(); n > 4096 {
		t.Errorf("read %d bytes of a file that can contribute at most 4096", n)
	}
}

func TestLoadWarnings(t *testing.T) {
	t.Parallel()
	root := repo(t)
	mkdir(t, filepath.Join(root, FileName)) // a directory named AGENTS.md
	write(t, filepath.Join(root, "a", FileName), "unreadable")
	ws := filepath.Join(root, "a", "b")
	mkdir(t, ws)
	if err := os.Symlink(filepath.Join(root, "gone.md"), filepath.Join(ws, FileName)); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	home := tempDir(t)
	write(t, filepath.Join(home, FileName), "home rules")
	fsys := &countingFS{fail: map[string]bool{filepath.Join(root, "a", FileName): true}}

	got, err := Load(ws, home, Options{FS: fsys})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !slices.Equal(got.Files, []string{filepath.Join(home, FileName)}) {
		t.Errorf("Files = %q", got.Files)
	}
	want := []string{
		"../../AGENTS.md is a directory, not a file; ignored",
		"cannot read ../AGENTS.md: permission denied; ignored",
		"AGENTS.md is a broken symbolic link; ignored",
	}
	if !slices.Equal(got.Warnings, want) {
		t.Errorf("Warnings =\n%q\nwant\n%q", got.Warnings, want)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	file := filepath.Join(dir, "file")
	write(t, file, "x")
	for _, ws := range []string{"", filepath.Join(dir, "missing"), file} {
		if _, err := Load(ws, "", Options{}); err == nil {
			t.Errorf("Load(%q) succeeded", ws)
		} else if !strings.HasPrefix(err.Error(), "load AGENTS.md: ") {
			t.Errorf("Load(%q): error %q lacks context", ws, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing"), "", Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing workspace's error does not wrap fs.ErrNotExist: %v", err)
	}
}

// TestLoadEmptyAndInvalid checks that blank files are skipped and invalid
// UTF-8 is replaced.
func TestLoadEmptyAndInvalid(t *testing.T) {
	t.Parallel()
	root := repo(t)
	write(t, filepath.Join(root, FileName), " \n\t\n")
	ws := filepath.Join(root, "ws")
	write(t, filepath.Join(ws, FileName), "caf\xe9 rules")
	got := load(t, ws, "", Options{})
	if got.Text != "# AGENTS.md from AGENTS.md\n\ncaf\uFFFD rules\n" || len(got.Files) != 1 {
		t.Errorf("got %+v", got)
	}
}

func TestLoadCache(t *testing.T) {
	t.Parallel()
	root := repo(t)
	rootFile := filepath.Join(root, FileName)
	write(t, rootFile, "root rules")
	ws := filepath.Join(root, "ws")
	wsFile := filepath.Join(ws, FileName)
	write(t, wsFile, "ws rules v1")
	fsys := &countingFS{}
	var cache Cache
	opts := Options{FS: fsys, Cache: &cache}

	first := load(t, ws, "", opts)
	second := load(t, ws, "", opts)
	if first.Text != second.Text {
		t.Errorf("cached text differs")
	}
	if got := fsys.opensOf(rootFile, wsFile); got != [2]int{1, 1} {
		t.Errorf("opens after two loads = %v, want one each", got)
	}

	// An edit (new content, new mtime) is picked up, and only that file is
	// read again.
	write(t, wsFile, "ws rules v2")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(wsFile, later, later); err != nil {
		t.Fatal(err)
	}
	third := load(t, ws, "", opts)
	if !strings.Contains(third.Text, "ws rules v2") {
		t.Errorf("edit not seen: %q", third.Text)
	}
	if got := fsys.opensOf(rootFile, wsFile); got != [2]int{1, 2} {
		t.Errorf("opens after the edit = %v, want [1 2]", got)
	}

	// A size change alone is enough too.
	write(t, rootFile, "root rules, longer")
	if err := os.Chtimes(rootFile, later, later); err != nil {
		t.Fatal(err)
	}
	write(t, rootFile, "root rules, longer now")
	if err := os.Chtimes(rootFile, later, later); err != nil {
		t.Fatal(err)
	}
	if got := load(t, ws, "", opts); !strings.Contains(got.Text, "root rules, longer now") {
		t.Errorf("size change not seen: %q", got.Text)
	}

	// Without a cache every load reads every file.
	plain := &countingFS{}
	load(t, ws, "", Options{FS: plain})
	load(t, ws, "", Options{FS: plain})
	if got := plain.opensOf(rootFile, wsFile); got != [2]int{2, 2} {
		t.Errorf("opens without a cache = %v, want [2 2]", got)
	}
}

// TestLoadCacheLimit checks that a file cached under a small cap is read
// again when a larger cap needs more of it.
func TestLoadCacheLimit(t *testing.T) {
	t.Parallel()
	ws := tempDir(t)
	f := filepath.Join(ws, FileName)
	write(t, f, strings.Repeat("rule line\n", 1000))
	fsys := &countingFS{}
	var cache Cache
	small := load(t, ws, "", Options{FS: fsys, Cache: &cache, MaxBytes: 1000})
	big := load(t, ws, "", Options{FS: fsys, Cache: &cache, MaxBytes: 20000})
	again := load(t, ws, "", Options{FS: fsys, Cache: &cache, MaxBytes: 1000})
	if len(small.Warnings) != 1 || len(big.Warnings) != 0 || again.Text != small.Text {
		t.Errorf("small %q, big %q, again equal=%v", small.Warnings, big.Warnings, again.Text == small.Text)
	}
	if got := fsys.opensOf(f); got[0] != 2 {
		t.Errorf("opens = %d, want 2 (the larger cap reads again, the smaller reuses it)", got[0])
	}
}

func TestLoadConcurrent(t *testing.T) {
	t.Parallel()
	root := repo(t)
	write(t, filepath.Join(root, FileName), "root rules")
	ws := filepath.Join(root, "ws")
	write(t, filepath.Join(ws, FileName), "ws rules")
	var cache Cache
	want := load(t, ws, "", Options{Cache: &cache}).Text
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, err := Load(ws, "", Options{Cache: &cache})
				if err != nil || got.Text != want {
					t.Errorf("concurrent Load: %v, %q", err, got.Text)
					return
				}
			}
		})
	}
	wg.Wait()
}
