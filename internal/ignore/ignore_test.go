package ignore

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// tree is a workspace with ignore rules of every kind.
var tree = map[string]string{
	".gitignore":               "# comment\nbuild/\n*.log\n!keep.log\n/root-only.txt\ndocs/**/draft.md\n**/cache\nspaced.txt   \r\n",
	".git/HEAD":                "ref: refs/heads/main\n",
	".git/info/exclude":        "secret.txt\n",
	"a.log":                    "",
	"a.tmp":                    "",
	"build/out.bin":            "",
	"build.txt":                "",
	"docs/a/b/draft.md":        "",
	"docs/draft.md":            "",
	"docs/final.md":            "",
	"keep.log":                 "",
	"lib/build":                "a file named build",
	"main.go":                  "",
	"root-only.txt":            "",
	"secret.txt":               "",
	"spaced.txt":               "",
	"src/build/x.go":           "",
	"src/root-only.txt":        "",
	"sub/.gitignore":           "*.tmp\n/local.txt\n!important.log\n",
	"sub/a.tmp":                "",
	"sub/deeper/important.log": "",
	"sub/deeper/local.txt":     "",
	"sub/important.log":        "",
	"sub/local.txt":            "",
	"sub/mod/.git":             "gitdir: ../../.git/modules/mod\n",
	"x/cache/file":             "",
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestMatch(t *testing.T) {
	t.Parallel()
	m := New(writeTree(t, tree))
	tests := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{".", true, false},
		{"main.go", false, false},
		{".git", true, true},
		{".git/HEAD", false, true},
		{"sub/mod/.git", false, true},
		{"build", true, true},          // dir-only pattern, the directory itself
		{"build", false, false},        // …but not a file of that name
		{"lib/build", false, false},    // …at any depth
		{"build/out.bin", false, true}, // inside an ignored directory
		{"src/build", true, true},
		{"src/build/x.go", false, true},
		{"build.txt", false, false},
		{"a.log", false, true},
		{"deep/er/a.log", false, true},
		{"keep.log", false, false}, // negation
		{"root-only.txt", false, true},
		{"src/root-only.txt", false, false}, // anchored
		{"docs/draft.md", false, true},      // ** matches no directory too
		{"docs/a/b/draft.md", false, true},
		{"docs/final.md", false, false},
		{"other/draft.md", false, false},
		{"cache", true, true},
		{"x/cache/file", false, true},
		{"secret.txt", false, true}, // .git/info/exclude
		{"spaced.txt", false, true}, // trailing spaces and CR dropped
		{"a.tmp", false, false},     // sub's pattern does not reach up
		{"sub/a.tmp", false, true},
		{"sub/x/y.tmp", false, true},
		{"sub/local.txt", false, true},         // anchored to sub
		{"sub/deeper/local.txt", false, false}, // …so not deeper
		{"sub/important.log", false, false},    // negated in sub
		{"sub/deeper/important.log", false, false},
		{"/a.log", false, true}, // a leading slash is tolerated
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			if got := m.Match(tt.path, tt.isDir); got != tt.want {
				t.Errorf("Match(%q, dir=%v) = %v, want %v", tt.path, tt.isDir, got, tt.want)
			}
		})
	}
}

// walkAll returns the paths Walk reports, files and directories.
func walkAll(t *testing.T, m *Matcher, dir string, fn WalkFunc) []string {
	t.Helper()
	var got []string
	err := m.Walk(dir, func(rel string, d fs.DirEntry) error {
		got = append(got, rel)
		if fn != nil {
			return fn(rel, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWalk(t *testing.T) {
	t.Parallel()
	root := writeTree(t, tree)
	tests := []struct {
		name string
		dir  string
		fn   WalkFunc
		want []string
	}{
		{
			name: "root", dir: ".",
			want: []string{
				".gitignore", "build.txt", "docs", "docs/a", "docs/a/b", "docs/final.md",
				"keep.log", "lib", "lib/build", "main.go", "a.tmp", "src",
				"src/root-only.txt", "sub", "sub/.gitignore", "sub/deeper", "sub/deeper/important.log",
				"sub/deeper/local.txt", "sub/important.log", "sub/mod", "x",
			},
		},
		{
			name: "subdirectory keeps the rules above it", dir: "sub",
			want: []string{
				"sub/.gitignore", "sub/deeper", "sub/deeper/important.log",
				"sub/deeper/local.txt", "sub/important.log", "sub/mod",
			},
		},
		{
			name: "an ignored directory walked on purpose", dir: "src/build",
			want: []string{"src/build/x.go"},
		},
		{name: ".git is never walked", dir: ".git/info", want: nil},
		{
			name: "skip a directory", dir: ".",
			fn: func(rel string, d fs.DirEntry) error {
				if d.IsDir() && rel != "docs" {
					return fs.SkipDir
				}
				return nil
			},
			want: []string{
				".gitignore", "a.tmp", "build.txt", "docs", "docs/a", "docs/final.md",
				"keep.log", "lib", "main.go", "src", "sub", "x",
			},
		},
		{
			name: "skip all", dir: ".",
			fn: func(rel string, d fs.DirEntry) error {
				if rel == "build.txt" {
					return fs.SkipAll
				}
				return nil
			},
			want: []string{".gitignore", "a.tmp", "build.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := walkAll(t, New(root), tt.dir, tt.fn)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			if !slices.Equal(sorted, want) {
				t.Errorf("Walk(%q) =\n%q\nwant\n%q", tt.dir, got, want)
			}
		})
	}
}

func TestWalkOrder(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"b/x": "", "a.go": "", "a/y": "", "c": ""})
	got := walkAll(t, New(root), ".", nil)
	want := []string{"a", "a/y", "a.go", "b", "b/x", "c"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk order = %q, want %q", got, want)
	}
}

func TestWalkErrors(t *testing.T) {
	t.Parallel()
	root := writeTree(t, map[string]string{"f": ""})
	if err := New(root).Walk("missing", func(string, fs.DirEntry) error { return nil }); err == nil {
		t.Error("Walk of a missing directory succeeded")
	}
	if err := New(root).Walk(".git", func(string, fs.DirEntry) error { return nil }); err == nil {
		t.Error("Walk of a missing .git succeeded")
	}
	var n int
	if err := Walk(root, func(string, fs.DirEntry) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("Walk = %v after %d entries, want nil after 1", err, n)
	}
}

func TestWalkSymlink(t *testing.T) {
	t.Parallel()
	outside := writeTree(t, map[string]string{"secret": ""})
	root := writeTree(t, map[string]string{"f": ""})
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var links []string
	got := walkAll(t, NewFS(r.FS()), ".", func(rel string, d fs.DirEntry) error {
		if d.Type()&fs.ModeSymlink != 0 {
			links = append(links, rel)
		}
		return nil
	})
	if want := []string{"f", "link"}; !slices.Equal(got, want) || !slices.Equal(links, []string{"link"}) {
		t.Errorf("Walk = %q (symlinks %q), want %q with link reported as a symlink", got, links, want)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	ps := parse([]byte("# c\n\n  \n*.o\r\n!a.o\n"), []string{"d"})
	if len(ps) != 2 {
		t.Fatalf("parse kept %d patterns, want 2", len(ps))
	}
	if !excluded(ps, []string{"d", "x.o"}, false) || excluded(ps, []string{"d", "a.o"}, false) ||
		excluded(ps, []string{"x.o"}, false) {
		t.Error("patterns do not match as expected")
	}
}

// TestRulesKeepTheirDirectory: the patterns of a nested .gitignore read
// during a walk still apply to their own directory, and to no sibling,
// when asked about after the walk.
func TestRulesKeepTheirDirectory(t *testing.T) {
	t.Parallel()
	m := New(writeTree(t, map[string]string{
		"one/.gitignore": "*.tmp\n",
		"one/a.tmp":      "",
		"two/a.tmp":      "",
	}))
	walkAll(t, m, ".", nil)
	if !m.Match("one/a.tmp", false) {
		t.Error("one/a.tmp is not ignored after the walk; one/.gitignore says it is")
	}
	if m.Match("two/a.tmp", false) {
		t.Error("two/a.tmp is ignored after the walk; only one/.gitignore names *.tmp")
	}
}
