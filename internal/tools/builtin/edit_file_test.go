package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// newGuardedEnv is newEnv with a read-before-write guard.
func newGuardedEnv(t *testing.T) (*tools.Env, string) {
	t.Helper()
	env, root := newEnv(t)
	env.Files = tools.NewFileTracker(root)
	return env, root
}

// editArgs builds edit_file arguments.
func editArgs(path, old, new string, all bool) string {
	b, _ := json.Marshal(editFileArgs{Path: path, OldString: old, NewString: new, ReplaceAll: all})
	return string(b)
}

// changeOnDisk rewrites a file behind the session's back, with a
// modification time that surely differs from the one it had.
func changeOnDisk(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	outside := t.TempDir()
	longLine := strings.Repeat("x", 1<<20)
	writeFiles(t, root, map[string]string{
		"simple.txt":       "hello world\n",
		"all.txt":          "x x x\n",
		"dup.txt":          "a\nfoo\nb\nfoo\n",
		"missing.txt":      "alpha\nbeta\n",
		"ws.go":            "\tif x {\n\t\treturn\n\t}\n",
		"first.go":         "func f() {\n\treturn 1\n}\n",
		"crlf.txt":         "one\r\ntwo\r\nthree\r\n",
		"crlf1.txt":        "a\r\nb\r\n",
		"lf.txt":           "a\nb\n",
		"lfonly.txt":       "a\nb\n",
		"nonl.txt":         "a\nb",
		"nonl2.txt":        "a\nb",
		"keepnl.txt":       "a\nb\n",
		"noop.txt":         "a",
		"empty.txt":        "",
		"long.txt":         longLine + "needle" + longLine + "\n",
		"bin.dat":          "abc\x00def",
		"realdir/f.txt":    "via link\n",
		"$(touch x).txt":   "dollar\n",
		"-rf":              "dash\n",
		"hl.txt":           "linked\n",
		"target.txt":       "target\n",
		"mode.sh":          "#!/bin/sh\necho a\n",
		".git/config":      "[core]\n",
		"multi/a b/c d.md": "spaces\n",
	})
	writeFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
	for _, l := range [][2]string{{outside, "out"}, {"realdir", "linkdir"}, {"target.txt", "link.txt"}} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Skipf("symlinks not available: %v", err)
		}
	}
	if err := os.Link(filepath.Join(root, "hl.txt"), filepath.Join(outside, "hl-elsewhere.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "mode.sh"), 0o750); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		args     string
		file     string // checked after a successful edit
		want     string // its content
		out      string // the result, exactly, if set
		has      string // a part of the result
		wantErr  string
		errIs    error
		wantMode os.FileMode
	}{
		{
			name: "simple", args: editArgs("simple.txt", "world", "there", false), file: "simple.txt", want: "hello there\n",
			out: "Edited simple.txt: 1 replacement\n\n--- a/simple.txt\n+++ b/simple.txt\n@@ -1 +1 @@\n-hello world\n+hello there\n",
		},
		{name: "replace all", args: editArgs("all.txt", "x", "y", true), file: "all.txt", want: "y y y\n", has: "Edited all.txt: 3 replacements"},
		{
			name: "not unique", args: editArgs("dup.txt", "foo", "bar", false),
			wantErr: "old_string occurs 2 times in dup.txt (lines 2, 4); add surrounding lines to make it unique, or set replace_all",
		},
		{name: "not found", args: editArgs("missing.txt", "gamma", "delta", false), wantErr: "old_string was not found in missing.txt; read the file again"},
		{
			name: "different whitespace", args: editArgs("ws.go", "if x {\n    return\n}", "if y {}", false),
			wantErr: "old_string was not found in ws.go, but it matches at line 1 if whitespace and line endings are ignored: " +
				"the file has different whitespace or line endings there",
		},
		{
			name: "first line found", args: editArgs("first.go", "func f() {\n\treturn 2\n}", "", false),
			wantErr: `old_string was not found in first.go; its first line "func f() {" occurs at line 1`,
		},
		{
			name: "crlf file, lf strings", args: editArgs("crlf.txt", "one\ntwo", "1\n2\n2.5", false),
			file: "crlf.txt", want: "1\r\n2\r\n2.5\r\nthree\r\n", has: "(line endings converted to CRLF to match the file)",
		},
		{name: "crlf file, new lines", args: editArgs("crlf1.txt", "a", "a\nx", false), file: "crlf1.txt", want: "a\r\nx\r\nb\r\n"},
		{
			name: "lf file, crlf strings", args: editArgs("lf.txt", "a\r\nb", "A\r\nB", false),
			file: "lf.txt", want: "A\nB\n", has: "(line endings converted to LF to match the file)",
		},
		{
			name: "no trailing newline", args: editArgs("nonl.txt", "b", "c", false), file: "nonl.txt", want: "a\nc",
			has: "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
		},
		{name: "no trailing newline kept", args: editArgs("nonl2.txt", "b", "c\n", false), file: "nonl2.txt", want: "a\nc"},
		{name: "trailing newline kept", args: editArgs("keepnl.txt", "b\n", "c", false), file: "keepnl.txt", want: "a\nc\n"},
		{name: "no-op after newline rule", args: editArgs("noop.txt", "a", "a\n", false), wantErr: "the edit leaves noop.txt as it was: old_string and new_string differ only in line endings or a final newline"},
		{name: "line endings only", args: editArgs("lfonly.txt", "a\nb", "a\r\nb", false), wantErr: "the edit leaves lfonly.txt as it was"},
		{name: "empty file", args: editArgs("empty.txt", "a", "b", false), wantErr: "old_string was not found: empty.txt is empty"},
		{name: "empty old_string", args: editArgs("simple.txt", "", "b", false), wantErr: "old_string is empty"},
		{name: "same strings", args: editArgs("simple.txt", "a", "a", false), wantErr: "old_string and new_string are the same"},
		{
			name: "very long line", args: editArgs("long.txt", "needle", "pin", false),
			file: "long.txt", want: longLine + "pin" + longLine + "\n", has: "bytes omitted",
		},
		{name: "missing file", args: editArgs("nope.txt", "a", "b", false), wantErr: "file not found: nope.txt; only existing files can be edited (use write_file to create one)"},
		{name: "directory", args: editArgs("realdir", "a", "b", false), wantErr: "realdir is a directory, not a file"},
		{name: "binary", args: editArgs("bin.dat", "abc", "x", false), wantErr: "bin.dat is a binary file (7 B); only text files can be edited"},
		{name: "dot-dot", args: editArgs("../x.txt", "a", "b", false), errIs: tools.ErrOutsideWorkspace},
		{name: "symlink out", args: editArgs("out/secret.txt", "secret", "pwned", false), errIs: tools.ErrOutsideWorkspace},
		{name: "git", args: editArgs(".git/config", "core", "x", false), errIs: tools.ErrGitInternals},
		{
			name: "through symlinked directory", args: editArgs("linkdir/f.txt", "via", "through", false),
			file: "realdir/f.txt", want: "through link\n", has: "Edited realdir/f.txt: 1 replacement",
		},
		{name: "symlinked file", args: editArgs("link.txt", "target", "changed", false), file: "target.txt", want: "changed\n"},
		{name: "shell-like name", args: editArgs("$(touch x).txt", "dollar", "cash", false), file: "$(touch x).txt", want: "cash\n"},
		{name: "dash name", args: editArgs("-rf", "dash", "hyphen", false), file: "-rf", want: "hyphen\n"},
		{name: "spaces in path", args: editArgs("multi/a b/c d.md", "spaces", "gaps", false), file: "multi/a b/c d.md", want: "gaps\n"},
		{name: "hard link", args: editArgs("hl.txt", "linked", "x", false), wantErr: "hl.txt has 2 hard links; editing it would change files outside the workspace"},
		{name: "mode kept", args: editArgs("mode.sh", "echo a", "echo b", false), file: "mode.sh", want: "#!/bin/sh\necho b\n", wantMode: 0o750},
	}
	t.Cleanup(func() {
		// Runs after the parallel subtests below.
		if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "secret\n" {
			t.Errorf("the file outside was changed to %q", data)
		}
		if fi, err := os.Lstat(filepath.Join(root, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("link.txt is no longer a symlink: %v, %v", fi, err)
		}
		for _, name := range []string{"x", filepath.Join("..", "x")} {
			if _, err := os.Stat(filepath.Join(root, name)); err == nil {
				t.Errorf("a file named %s was created: a path was run through a shell", name)
			}
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, newEditFile(), env, tt.args)
			if tt.wantErr != "" || tt.errIs != nil {
				if err == nil {
					t.Fatalf("edit succeeded: %s", got)
				}
				if tt.errIs != nil && !errors.Is(err, tt.errIs) {
					t.Errorf("error %v does not match %v", err, tt.errIs)
				}
				if !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("error:\n%s\nwant prefix:\n%s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), root+"/") {
					t.Errorf("error %q shows an absolute path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.out != "" && got != tt.out {
				t.Errorf("result:\n%s\nwant:\n%s", got, tt.out)
			}
			if !strings.Contains(got, tt.has) {
				t.Errorf("result:\n%s\nwant it to contain:\n%s", clip(got), tt.has)
			}
			p := filepath.Join(root, filepath.FromSlash(tt.file))
			data, err := os.ReadFile(p)
			if err != nil || string(data) != tt.want {
				t.Errorf("%s holds %q, %v; want %q", tt.file, clip(string(data)), err, clip(tt.want))
			}
			if tt.wantMode != 0 {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != tt.wantMode {
					t.Errorf("mode = %v, %v; want %v", fi.Mode().Perm(), err, tt.wantMode)
				}
			}
		})
	}
}

func TestEditFileGuard(t *testing.T) {
	t.Parallel()
	env, root := newGuardedEnv(t)
	writeFiles(t, root, map[string]string{"g.txt": "one\ntwo\nthree\n", "part.txt": "1\n2\n3\n"})
	p := filepath.Join(root, "g.txt")
	edit := func(old, new string) error {
		t.Helper()
		_, err := run(t, newEditFile(), env, editArgs("g.txt", old, new, false))
		return err
	}
	read := func(args string) {
		t.Helper()
		if _, err := run(t, newReadFile(), env, args); err != nil {
			t.Fatal(err)
		}
	}

	err := edit("one", "1")
	if !errors.Is(err, tools.ErrFileNotRead) ||
		err.Error() != "g.txt has not been read in this session; read it with read_file before editing it" {
		t.Fatalf("edit before read: %v", err)
	}
	read(`{"path":"g.txt"}`)
	if err := edit("one", "1"); err != nil {
		t.Fatalf("edit after read: %v", err)
	}
	if err := edit("two", "2"); err != nil {
		t.Fatalf("second edit (own edit counts as read): %v", err)
	}
	changeOnDisk(t, p, "1\n2\nTHREE\n")
	err = edit("THREE", "3")
	if !errors.Is(err, tools.ErrFileChanged) || !strings.HasPrefix(err.Error(), "g.txt changed on disk since it was last read (modified ") {
		t.Fatalf("edit after outside change: %v", err)
	}
	read(`{"path":"g.txt"}`)
	if err := edit("THREE", "3"); err != nil {
		t.Fatalf("edit after re-read: %v", err)
	}
	later := time.Now().Add(2 * time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if err := edit("3", "three"); err != nil {
		t.Fatalf("edit after a touch without change: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "1\n2\nthree\n" {
		t.Errorf("g.txt = %q", data)
	}

	read(`{"path":"part.txt","offset":2,"limit":1}`)
	if _, err := run(t, newEditFile(), env, editArgs("part.txt", "3", "4", false)); err != nil {
		t.Errorf("edit after a partial read: %v", err)
	}
	if _, err := run(t, newWriteFile(), env, `{"path":"new.txt","content":"a\n"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, newEditFile(), env, editArgs("new.txt", "a", "b", false)); err != nil {
		t.Errorf("edit of a file the session created: %v", err)
	}
	// A read through a symlinked path guards the canonical file.
	if err := os.Symlink(root, filepath.Join(root, "self")); err != nil {
		t.Skip(err)
	}
	writeFiles(t, root, map[string]string{"s.txt": "s\n"})
	read(`{"path":"self/s.txt"}`)
	if _, err := run(t, newEditFile(), env, editArgs("s.txt", "s", "t", false)); err != nil {
		t.Errorf("edit after reading through a symlink: %v", err)
	}
}

// TestEditFileLarge edits one line of a 50 MB file and renames a word on
// every 1000th line of it.
func TestEditFileLarge(t *testing.T) {
	t.Parallel()
	if testing.Short() || raceDetector {
		t.Skip("writes a 50 MB file; skipped in -short mode and under the race detector")
	}
	env, root := newEnv(t)
	var sb strings.Builder
	const lines = 1_000_000
	for i := range lines {
		if i%1000 == 999 {
			fmt.Fprintf(&sb, "line %07d of the big file, with a rename_me in it.\n", i)
		} else {
			fmt.Fprintf(&sb, "line %07d of the big file, padded to fifty bytes.\n", i)
		}
	}
	content := sb.String()
	writeFiles(t, root, map[string]string{"big.txt": content})

	start := time.Now()
	got, err := run(t, newEditFile(), env, editArgs("big.txt", "line 0500000 of", "LINE 500000 OF", false))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "@@ -499998,7 +499998,7 @@") {
		t.Errorf("diff:\n%s", clip(got))
	}
	single := time.Since(start)

	start = time.Now()
	got, err = run(t, newEditFile(), env, editArgs("big.txt", "rename_me", "renamed", true))
	if err != nil {
		t.Fatal(err)
	}
	all := time.Since(start)
	if !strings.HasPrefix(got, "Edited big.txt: 1000 replacements") || !strings.Contains(got, "bytes omitted") {
		t.Errorf("result:\n%s", clip(got))
	}
	data, err := os.ReadFile(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(strings.Replace(content, "line 0500000 of", "LINE 500000 OF", 1), "rename_me", "renamed")
	if string(data) != want {
		t.Error("big.txt does not hold the expected content")
	}
	t.Logf("50 MB file: one edit %v, replace-all of 1000 %v", single, all)
	if single > 10*time.Second || all > 10*time.Second {
		t.Errorf("too slow: %v, %v", single, all)
	}
}

func TestEditSummaryAndSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool tools.Tool
		args string
		want string
	}{
		{newEditFile(), editArgs("./src//a.go", "a", "b", false), "Edit src/a.go"},
		{newEditFile(), editArgs("a.go", "a", "b", true), "Edit a.go (all occurrences)"},
		{newEditFile(), `{`, "Edit file"},
		{newApplyPatch(), `{"patch":"*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: b.txt\n*** End Patch"}`, "Patch 2 files (a.txt, b.txt)"},
		{newApplyPatch(), `{"patch":"*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch"}`, "Patch 1 file (a -> b)"},
		{
			newApplyPatch(),
			`{"patch":"*** Begin Patch\n*** Delete File: a\n*** Delete File: b\n*** Delete File: c\n*** Delete File: d\n*** Delete File: a\n*** End Patch"}`,
			"Patch 4 files (a, b, c, …)",
		},
		{newApplyPatch(), `{"patch":"garbage"}`, "Apply patch"},
	}
	for _, tt := range tests {
		if got := tt.tool.Summary(json.RawMessage(tt.args)); got != tt.want {
			t.Errorf("%s.Summary(%s) = %q, want %q", tt.tool.Info().Name, tt.args, got, tt.want)
		}
	}

	reg, err := tools.NewRegistry(newEditFile(), newApplyPatch())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool, args string
		ok         bool
	}{
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y"}`, true},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y","replace_all":true}`, true},
		{"edit_file", `{"path":"a","old_string":"x"}`, false},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, false},
		{"apply_patch", `{"patch":"x"}`, true},
		{"apply_patch", `{}`, false},
		{"apply_patch", `{"patch":"x","path":"a"}`, false},
	} {
		if err := reg.Validate(tt.tool, json.RawMessage(tt.args)); (err == nil) != tt.ok {
			t.Errorf("Validate(%s, %s) = %v, want ok=%v", tt.tool, tt.args, err, tt.ok)
		}
	}
}

func FuzzEditMatch(f *testing.F) {
	f.Add("a\nfoo\nb\n", "foo", "bar", false)
	f.Add("a\r\nb\r\nc", "a\nb", "x\ny", false)
	f.Add("a\nb\n", "a\r\nb", "A", true)
	f.Add("x x x", "x", "", true)
	f.Add("", "a", "b", false)
	f.Add("\tif x {\n\t}\n", "if x {\n}", "y", false)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		if old == "" {
			return
		}
		m, err := matchEdit(content, old, new, all, "f")
		if err != nil {
			if strings.Contains(content, old) && (all || strings.Count(content, old) == 1) {
				t.Fatalf("%q is in %q, but: %v", old, content, err)
			}
			return
		}
		if len(m.offsets) == 0 || (!all && len(m.offsets) != 1) {
			t.Fatalf("%d offsets", len(m.offsets))
		}
		prev := -1
		for _, off := range m.offsets {
			if off < prev || off+len(m.old) > len(content) || content[off:off+len(m.old)] != m.old {
				t.Fatalf("bad offset %d for %q in %q", off, m.old, content)
			}
			prev = off + len(m.old)
		}
		if all && len(m.offsets) != strings.Count(content, m.old) {
			t.Fatalf("%d offsets, %d occurrences", len(m.offsets), strings.Count(content, m.old))
		}
		if toLF(m.old) != toLF(old) || toLF(m.new) != toLF(new) {
			t.Fatalf("adapted strings differ beyond line endings: %q/%q from %q/%q", m.old, m.new, old, new)
		}
		out := m.apply(content)
		if out != "" && strings.HasSuffix(content, "\n") && !strings.HasSuffix(out, "\n") {
			t.Fatalf("final newline lost: %q -> %q", content, out)
		}
	})
}
