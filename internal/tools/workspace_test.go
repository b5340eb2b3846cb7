package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testTree is a workspace with the links and neighbours the resolve tests
// need.
type testTree struct {
	ws      *Workspace
	root    string // canonical
	outside string // canonical, outside root
	allowed string // canonical, allowed
}

func newTestTree(t testing.TB) testTree {
	t.Helper()
	canon := func(p string) string {
		c, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	parent := canon(t.TempDir())
	root := filepath.Join(parent, "ws")
	outside := canon(t.TempDir())
	allowed := canon(t.TempDir())
	mustMkdir(t, root, "dir", "sub/.git", ".git", "sub/deep")
	mustMkdir(t, parent, "ws-evil")
	mustWrite(t, root, "a.txt", "a\n")
	mustWrite(t, root, "dir/b.txt", "b\n")
	mustWrite(t, root, ".git/config", "[core]\n")
	mustWrite(t, root, ".gitignore", "bin/\n")
	mustWrite(t, parent, "ws-evil/x", "evil\n")
	mustWrite(t, outside, "secret", "secret\n")
	mustWrite(t, allowed, "c.txt", "c\n")
	mustSymlink(t, outside, filepath.Join(root, "out"))
	mustSymlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "secret-link"))
	mustSymlink(t, filepath.Join(outside, "nothing-yet"), filepath.Join(root, "dangling"))
	mustSymlink(t, "dir", filepath.Join(root, "in"))
	mustSymlink(t, filepath.Join(root, "dir", "b.txt"), filepath.Join(root, "abs-in"))
	mustSymlink(t, "../..", filepath.Join(root, "sub", "deep", "up2"))
	mustSymlink(t, "../../..", filepath.Join(root, "sub", "deep", "up3"))
	mustSymlink(t, ".git", filepath.Join(root, "gitlink"))
	mustSymlink(t, "loop2", filepath.Join(root, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(root, "loop2"))

	ws, err := NewWorkspace(root, allowed)
	if err != nil {
		t.Fatalf("NewWorkspace: %v", err)
	}
	return testTree{ws: ws, root: root, outside: outside, allowed: allowed}
}

func mustMkdir(t testing.TB, base string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func mustWrite(t testing.TB, base, name, content string) {
	t.Helper()
	p := filepath.Join(base, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	tr := newTestTree(t)
	root := tr.root
	tests := []struct {
		name    string
		path    string
		write   bool
		wantRel string // "" when an error is expected
		wantErr error  // sentinel the error must match, if any
		errHas  string
	}{
		{name: "relative", path: "a.txt", wantRel: "a.txt"},
		{name: "root itself", path: ".", wantRel: "."},
		{name: "absolute root", path: root, wantRel: "."},
		{name: "absolute inside", path: filepath.Join(root, "dir", "b.txt"), wantRel: "dir/b.txt"},
		{name: "dot-dot staying inside", path: "dir/../a.txt", wantRel: "a.txt"},
		{name: "unclean", path: "./dir//b.txt", wantRel: "dir/b.txt"},
		{name: "dot-dot escape", path: "../x", wantErr: ErrOutsideWorkspace},
		{name: "dot-dot escape deep", path: "dir/../../ws-evil/x", wantErr: ErrOutsideWorkspace},
		{name: "absolute outside", path: "/etc/passwd", wantErr: ErrOutsideWorkspace},
		{name: "sibling prefix", path: root + "-evil/x", wantErr: ErrOutsideWorkspace},
		{name: "sibling prefix dir", path: root + "-evil", wantErr: ErrOutsideWorkspace},
		{name: "symlink dir inside to outside", path: "out/secret", wantErr: ErrOutsideWorkspace, errHas: "through a symlink"},
		{name: "symlink inside to outside", path: "out", wantErr: ErrOutsideWorkspace},
		{name: "symlink file to outside", path: "secret-link", wantErr: ErrOutsideWorkspace},
		{name: "dangling symlink to outside", path: "dangling", write: true, wantErr: ErrOutsideWorkspace},
		{name: "new file under outside link", path: "out/new.txt", write: true, wantErr: ErrOutsideWorkspace},
		{name: "relative symlink climbing out", path: "sub/deep/up3/ws-evil/x", wantErr: ErrOutsideWorkspace},
		{name: "relative symlink climbing to root", path: "sub/deep/up2/a.txt", wantRel: "a.txt"},
		{name: "symlink inside to inside", path: "in/b.txt", wantRel: "dir/b.txt"},
		{name: "absolute symlink inside", path: "abs-in", wantRel: "dir/b.txt"},
		{name: "allowed dir", path: filepath.Join(tr.allowed, "c.txt"), wantRel: filepath.Join(tr.allowed, "c.txt")},
		{name: "allowed dir new file", path: filepath.Join(tr.allowed, "new", "n.txt"), write: true, wantRel: filepath.Join(tr.allowed, "new", "n.txt")},
		{name: "missing file in existing dir", path: "dir/new.txt", write: true, wantRel: "dir/new.txt"},
		{name: "missing dirs", path: "x/y/z.txt", write: true, wantRel: "x/y/z.txt"},
		{name: "through a file", path: "a.txt/child", wantRel: "a.txt/child"},
		{name: "git read allowed", path: ".git/config", wantRel: ".git/config"},
		{name: "git write refused", path: ".git/config", write: true, wantErr: ErrGitInternals},
		{name: "git dir write refused", path: ".git", write: true, wantErr: ErrGitInternals},
		{name: "git new file refused", path: ".git/hooks/pre-commit", write: true, wantErr: ErrGitInternals},
		{name: "git by other case refused", path: ".GIT/config", write: true, wantErr: ErrGitInternals},
		{name: "git via symlink refused", path: "gitlink/config", write: true, wantErr: ErrGitInternals},
		{name: "nested git refused", path: "sub/.git/HEAD", write: true, wantErr: ErrGitInternals},
		{name: "gitignore write allowed", path: ".gitignore", write: true, wantRel: ".gitignore"},
		{name: "git-prefixed name allowed", path: ".github/workflows/ci.yml", write: true, wantRel: ".github/workflows/ci.yml"},
		{name: "symlink loop", path: "loop1", errHas: "too many levels"},
		{name: "empty", path: "", errHas: "empty path"},
		{name: "NUL byte", path: "a\x00b", errHas: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resolve := tr.ws.Resolve
			if tt.write {
				resolve = tr.ws.ResolveForWrite
			}
			abs, rel, err := resolve(tt.path)
			if tt.wantRel == "" {
				if err == nil {
					t.Fatalf("resolve(%q) = %q, %q; want an error", tt.path, abs, rel)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("resolve(%q) error %q does not match %v", tt.path, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("resolve(%q) error %q does not contain %q", tt.path, err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%q): %v", tt.path, err)
			}
			if rel != tt.wantRel {
				t.Errorf("resolve(%q) rel = %q, want %q", tt.path, rel, tt.wantRel)
			}
			if !filepath.IsAbs(abs) {
				t.Errorf("resolve(%q) abs = %q, not absolute", tt.path, abs)
			}
			if !filepath.IsAbs(rel) && abs != filepath.Join(root, filepath.FromSlash(rel)) {
				t.Errorf("resolve(%q) abs = %q does not match rel %q", tt.path, abs, rel)
			}
		})
	}
}

func TestResolveErrorMessage(t *testing.T) {
	t.Parallel()
	tr := newTestTree(t)
	_, _, err := tr.ws.Resolve("../x")
	want := `path "../x" is outside the workspace ` + tr.root
	if err == nil || err.Error() != want {
		t.Errorf("Resolve(../x) error = %v, want %s", err, want)
	}
	_, _, err = tr.ws.ResolveForWrite(".git/config")
	if err == nil || !strings.Contains(err.Error(), "refusing to write .git/config") {
		t.Errorf("ResolveForWrite(.git/config) error = %v", err)
	}
}

func TestNewWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	mustWrite(t, dir, "f", "x")
	link := filepath.Join(t.TempDir(), "link")
	mustSymlink(t, dir, link)

	ws, err := NewWorkspace(link)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if ws.Root() != want {
		t.Errorf("Root() = %q, want symlink-resolved %q", ws.Root(), want)
	}
	for _, bad := range []string{"", file, filepath.Join(dir, "missing")} {
		if _, err := NewWorkspace(bad); err == nil {
			t.Errorf("NewWorkspace(%q) succeeded", bad)
		}
	}
	if _, err := NewWorkspace(dir, filepath.Join(dir, "missing")); err == nil {
		t.Error("NewWorkspace with a missing allowed dir succeeded")
	}
	ws, err = NewWorkspace(dir, filepath.Join(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ws.Allowed()); got != 1 {
		t.Errorf("Allowed() has %d dirs, want 1 (the root itself is dropped)", got)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	tr := newTestTree(t)
	ws := tr.ws

	t.Run("creates parents", func(t *testing.T) {
		t.Parallel()
		created, err := ws.WriteFileAtomic("new/dir/f.txt", []byte("hi\r\n"), 0o644)
		if err != nil || !created {
			t.Fatalf("WriteFileAtomic = %v, %v; want created", created, err)
		}
		got, err := os.ReadFile(filepath.Join(tr.root, "new", "dir", "f.txt"))
		if err != nil || string(got) != "hi\r\n" {
			t.Fatalf("content = %q, %v", got, err)
		}
		fi, _ := os.Stat(filepath.Join(tr.root, "new", "dir"))
		if fi.Mode().Perm()&0o700 != 0o700 {
			t.Errorf("new dir mode = %v", fi.Mode())
		}
		fi, _ = os.Stat(filepath.Join(tr.root, "new", "dir", "f.txt"))
		if perm := fi.Mode().Perm(); perm&^0o644 != 0 || perm&0o600 != 0o600 {
			t.Errorf("new file mode = %v, want 0644 less umask", perm)
		}
	})
	t.Run("keeps mode", func(t *testing.T) {
		t.Parallel()
		p := filepath.Join(tr.root, "dir", "mode.sh")
		mustWrite(t, tr.root, "dir/mode.sh", "old")
		if err := os.Chmod(p, 0o750); err != nil {
			t.Fatal(err)
		}
		created, err := ws.WriteFileAtomic("dir/mode.sh", []byte("new"), 0o644)
		if err != nil || created {
			t.Fatalf("WriteFileAtomic = %v, %v; want overwritten", created, err)
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Fatalf("mode = %v, %v; want 0750", fi.Mode(), err)
		}
	})
	t.Run("through symlink keeps link", func(t *testing.T) {
		t.Parallel()
		mustWrite(t, tr.root, "dir/target.txt", "old")
		mustSymlink(t, "target.txt", filepath.Join(tr.root, "dir", "link.txt"))
		if _, err := ws.WriteFileAtomic("dir/link.txt", []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(tr.root, "dir", "link.txt")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("link.txt is no longer a symlink: %v, %v", fi, err)
		}
		if got, _ := os.ReadFile(filepath.Join(tr.root, "dir", "target.txt")); string(got) != "new" {
			t.Errorf("target content = %q, want new", got)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{"dir", ".", "out/x", "dangling", ".git/config", "../escape"} {
			if _, err := ws.WriteFileAtomic(p, []byte("x"), 0o644); err == nil {
				t.Errorf("WriteFileAtomic(%q) succeeded", p)
			}
		}
		if _, err := os.Stat(filepath.Join(tr.outside, "nothing-yet")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("write through dangling symlink created the outside file: %v", err)
		}
		if got, _ := os.ReadFile(filepath.Join(tr.root, ".git", "config")); string(got) != "[core]\n" {
			t.Errorf(".git/config changed: %q", got)
		}
	})
	t.Run("no temp files left", func(t *testing.T) {
		t.Parallel()
		mustMkdir(t, tr.root, "clean")
		for range 3 {
			if _, err := ws.WriteFileAtomic("clean/f", []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		entries, _ := os.ReadDir(filepath.Join(tr.root, "clean"))
		if len(entries) != 1 {
			t.Errorf("clean/ holds %d entries, want 1", len(entries))
		}
	})
}

func TestWorkspaceReads(t *testing.T) {
	t.Parallel()
	tr := newTestTree(t)
	ws := tr.ws
	if data, err := ws.ReadFile("in/b.txt"); err != nil || string(data) != "b\n" {
		t.Errorf("ReadFile(in/b.txt) = %q, %v", data, err)
	}
	if _, err := ws.ReadFile("out/secret"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("ReadFile(out/secret) error = %v, want outside", err)
	}
	_, err := ws.ReadFile("dir/missing.txt")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) error = %v, want not exist", err)
	}
	if err != nil && strings.Contains(err.Error(), tr.root) {
		t.Errorf("error %q shows the absolute path", err)
	}
	if fi, err := ws.Stat("dir"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(dir) = %v, %v", fi, err)
	}
	entries, err := ws.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name() >= entries[i].Name() {
			t.Errorf("ReadDir not sorted: %s before %s", entries[i-1].Name(), entries[i].Name())
		}
	}
	if link, err := ws.Readlink("out"); err != nil || link != tr.outside {
		t.Errorf("Readlink(out) = %q, %v", link, err)
	}
	f, err := ws.Open(filepath.Join(tr.allowed, "c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 8)
	if n, _ := f.Read(buf); string(buf[:n]) != "c\n" {
		t.Errorf("Open(allowed/c.txt) read %q", buf[:n])
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"a.txt", ".", "..", "../ws-evil/x", "dir/../../x", "out/secret", "in/b.txt",
		"sub/deep/up2", "sub/deep/up3/ws-evil", "sub/deep/up3/ws/a.txt", "dangling", "loop1", "/", "/etc/passwd",
		"abs-in", "gitlink/../a.txt", "./././", "a\x00", "in/../out/..", "//x//y",
	} {
		f.Add(s)
	}
	tr := newTestTree(f)
	bases := []string{tr.root, tr.allowed}
	f.Fuzz(func(t *testing.T, p string) {
		for _, resolve := range []func(string) (string, string, error){tr.ws.Resolve, tr.ws.ResolveForWrite} {
			abs, rel, err := resolve(p)
			if err != nil {
				continue
			}
			if !insideAny(bases, abs) {
				t.Fatalf("resolve(%q) = %q, outside the workspace", p, abs)
			}
			// What the OS sees at abs must still be inside: resolve the
			// longest existing prefix independently.
			if real := evalExisting(abs); !insideAny(bases, real) {
				t.Fatalf("resolve(%q) = %q, which really is %q, outside", p, abs, real)
			}
			if abs2, _, err := tr.ws.Resolve(rel); err != nil || abs2 != abs {
				t.Fatalf("resolve(%q) rel %q does not resolve back: %q, %v", p, rel, abs2, err)
			}
		}
	})
}

func insideAny(bases []string, p string) bool {
	for _, b := range bases {
		if within(b, p) {
			return true
		}
	}
	return false
}

// evalExisting is filepath.EvalSymlinks on the longest existing prefix of
// p, with the rest appended.
func evalExisting(p string) string {
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
