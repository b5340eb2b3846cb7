package builtin

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// patchArgs builds apply_patch arguments from patch lines.
func patchArgs(lines ...string) string {
	b, _ := json.Marshal(applyPatchArgs{Patch: strings.Join(lines, "\n") + "\n"})
	return string(b)
}

// deleted marks a file that must not exist in TestApplyPatch.
const deleted = "<deleted>"

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	longLine := strings.Repeat("y", 200_000)
	base := map[string]string{
		"a.txt":          "one\ntwo\nthree\n",
		"b.go":           "package b\n\nfunc B() int {\n\treturn 1\n}\n",
		"old.txt":        "bye\n",
		"crlf.txt":       "one\r\ntwo\r\n",
		"nonl.txt":       "x\ny",
		"empty.txt":      "",
		"long.txt":       longLine + "\nend\n",
		"realdir/f.txt":  "real\n",
		"bin.dat":        "a\x00b\n",
		"hl.txt":         "linked\n",
		"dst.txt":        "in the way\n",
		"run.sh":         "#!/bin/sh\necho 1\n",
		".git/config":    "[core]\n",
		"$(touch x).txt": "dollar\n",
	}
	tests := []struct {
		name    string
		patch   string
		want    map[string]string // files after; deleted for gone
		out     string            // the result, exactly, if set
		has     []string          // parts of the result
		wantErr string            // a part of the error
		errIs   error
	}{
		{
			name: "add in new directory",
			patch: patchArgs("*** Begin Patch", "*** Add File: new/dir/n.txt", "+hello", "+", "+world",
				"*** End Patch"),
			want: map[string]string{"new/dir/n.txt": "hello\n\nworld\n"},
			out: "Applied the patch (1 change):\nA new/dir/n.txt\n\n--- /dev/null\n+++ b/new/dir/n.txt\n" +
				"@@ -0,0 +1,3 @@\n+hello\n+\n+world\n",
		},
		{
			name:    "add existing",
			patch:   patchArgs("*** Begin Patch", "*** Add File: a.txt", "+x", "*** End Patch"),
			wantErr: "add a.txt: the file already exists; use *** Update File to change it",
		},
		{
			name:  "delete",
			patch: patchArgs("*** Begin Patch", "*** Delete File: old.txt", "*** End Patch"),
			want:  map[string]string{"old.txt": deleted},
			out:   "Applied the patch (1 change):\nD old.txt\n",
		},
		{
			name:    "delete missing",
			patch:   patchArgs("*** Begin Patch", "*** Delete File: nope.txt", "*** End Patch"),
			wantErr: "delete nope.txt: the file does not exist",
		},
		{
			name: "update with anchor",
			patch: patchArgs("*** Begin Patch", "*** Update File: b.go", "@@ func B() int {", "-\treturn 1",
				"+\treturn 2", " }", "*** End Patch"),
			want: map[string]string{"b.go": "package b\n\nfunc B() int {\n\treturn 2\n}\n"},
			has:  []string{"M b.go\n", "--- a/b.go\n+++ b/b.go\n@@ -1,5 +1,5 @@\n package b\n \n func B() int {\n-\treturn 1\n+\treturn 2\n }\n"},
		},
		{
			name: "update missing file",
			patch: patchArgs("*** Begin Patch", "*** Update File: a.text", "@@", "-one", "+1",
				"*** End Patch"),
			wantErr: "update a.text: file not found: a.text (did you mean a.txt?)",
		},
		{
			name: "move keeps mode",
			patch: patchArgs("*** Begin Patch", "*** Update File: run.sh", "*** Move to: bin/run.sh", "@@",
				"-echo 1", "+echo 2", "*** End Patch"),
			want: map[string]string{"run.sh": deleted, "bin/run.sh": "#!/bin/sh\necho 2\n"},
			has:  []string{"R run.sh -> bin/run.sh\n", "--- a/run.sh\n+++ b/bin/run.sh\n"},
		},
		{
			name:    "move onto existing",
			patch:   patchArgs("*** Begin Patch", "*** Update File: a.txt", "*** Move to: dst.txt", "*** End Patch"),
			wantErr: "move a.txt to dst.txt: dst.txt already exists; delete it earlier in the patch",
		},
		{
			name: "delete then move onto",
			patch: patchArgs("*** Begin Patch", "*** Delete File: dst.txt", "*** Update File: a.txt",
				"*** Move to: dst.txt", "*** End Patch"),
			want: map[string]string{"a.txt": deleted, "dst.txt": "one\ntwo\nthree\n"},
			has:  []string{"D dst.txt\nR a.txt -> dst.txt\n"},
		},
		{
			name: "all or nothing",
			patch: patchArgs("*** Begin Patch", "*** Add File: created.txt", "+new", "*** Delete File: old.txt",
				"*** Update File: a.txt", "@@", " one", "-two", "+2", "@@", "-four", "+4", "*** End Patch"),
			wantErr: "update a.txt: hunk 2 (patch line 10): the lines to replace were not found after line 2",
		},
		{
			name: "two updates and an add-then-update",
			patch: patchArgs("*** Begin Patch", "*** Update File: a.txt", "@@", "-one", "+1",
				"*** Update File: a.txt", "@@", "-three", "+3",
				"*** Add File: c.txt", "+c", "*** Update File: c.txt", "@@", "+d", "*** End Patch"),
			want: map[string]string{"a.txt": "1\ntwo\n3\n", "c.txt": "c\nd\n"},
			has:  []string{"M a.txt\nM a.txt\nA c.txt\nM c.txt\n"},
		},
		{
			// codex's scenario: hunk lines without a prefix are context, so
			// the hunk matches and changes nothing; it is reported as such.
			name:  "a hunk that changes nothing",
			patch: patchArgs("*** Begin Patch", "*** Update File: a.txt", "@@", "one", "two", "*** End Patch"),
			want:  map[string]string{"a.txt": "one\ntwo\nthree\n"},
			out:   "The patch changed nothing:\n= a.txt" + unchangedNote + "\n",
		},
		{
			name: "an unchanged file beside a changed one",
			patch: patchArgs("*** Begin Patch", "*** Update File: a.txt", "@@", "-one", "+one",
				"*** Update File: old.txt", "@@", "-bye", "+hi", "*** End Patch"),
			want: map[string]string{"a.txt": "one\ntwo\nthree\n", "old.txt": "hi\n"},
			has:  []string{"Applied the patch (1 change):\n= a.txt" + unchangedNote + "\nM old.txt\n"},
		},
		{
			name:  "crlf",
			patch: patchArgs("*** Begin Patch", "*** Update File: crlf.txt", "@@", " one", "-two", "+2", "+3", "*** End Patch"),
			want:  map[string]string{"crlf.txt": "one\r\n2\r\n3\r\n"},
		},
		{
			name:  "no trailing newline",
			patch: patchArgs("*** Begin Patch", "*** Update File: nonl.txt", "@@", "-y", "+z", "*** End Patch"),
			want:  map[string]string{"nonl.txt": "x\nz"},
		},
		{
			name:  "empty file",
			patch: patchArgs("*** Begin Patch", "*** Update File: empty.txt", "@@", "+first", "*** End Patch"),
			want:  map[string]string{"empty.txt": "first\n"},
		},
		{
			name:  "long line",
			patch: patchArgs("*** Begin Patch", "*** Update File: long.txt", "@@", " "+longLine, "-end", "+fin", "*** End Patch"),
			want:  map[string]string{"long.txt": longLine + "\nfin\n"},
			has:   []string{"bytes omitted"},
		},
		{
			name:  "through symlinked directory",
			patch: patchArgs("*** Begin Patch", "*** Update File: linkdir/f.txt", "@@", "-real", "+changed", "*** End Patch"),
			want:  map[string]string{"realdir/f.txt": "changed\n"},
			has:   []string{"M realdir/f.txt\n"},
		},
		{
			name: "shell-like names",
			patch: patchArgs("*** Begin Patch", "*** Add File: -rf", "+dash", "*** Update File: $(touch x).txt",
				"@@", "-dollar", "+cash", "*** End Patch"),
			want: map[string]string{"-rf": "dash\n", "$(touch x).txt": "cash\n", "x": deleted},
		},
		{
			name:  "symlink out",
			patch: patchArgs("*** Begin Patch", "*** Update File: out/secret.txt", "@@", "-secret", "+pwned", "*** End Patch"),
			errIs: tools.ErrOutsideWorkspace,
		},
		{
			name:  "dot-dot",
			patch: patchArgs("*** Begin Patch", "*** Add File: ../escape.txt", "+x", "*** End Patch"),
			errIs: tools.ErrOutsideWorkspace,
		},
		{
			name:  "git",
			patch: patchArgs("*** Begin Patch", "*** Add File: .git/hooks/pre-commit", "+evil", "*** End Patch"),
			errIs: tools.ErrGitInternals,
		},
		{
			name:    "delete symlink",
			patch:   patchArgs("*** Begin Patch", "*** Delete File: linkdir", "*** End Patch"),
			wantErr: "delete linkdir: it is a symlink (to realdir); apply_patch does not delete symlinks",
		},
		{
			name:    "binary",
			patch:   patchArgs("*** Begin Patch", "*** Update File: bin.dat", "@@", "-a", "+b", "*** End Patch"),
			wantErr: "update bin.dat: it is a binary file",
		},
		{
			name:    "hard link",
			patch:   patchArgs("*** Begin Patch", "*** Update File: hl.txt", "@@", "-linked", "+x", "*** End Patch"),
			wantErr: "hl.txt has 2 hard links; editing it would change files outside the workspace",
		},
		{
			name:    "directory",
			patch:   patchArgs("*** Begin Patch", "*** Delete File: realdir", "*** End Patch"),
			wantErr: "delete realdir: realdir is a directory, not a file",
		},
		{
			name:    "parse error",
			patch:   patchArgs("*** Begin Patch", "*** Update File: a.txt", "@@", "-one"),
			wantErr: `parse patch: line 4: expected "*** End Patch" as the last line, got "-one" (was the patch cut off?)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, root := newEnv(t)
			outside := t.TempDir()
			writeFiles(t, root, base)
			writeFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
			if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, l := range [][2]string{{outside, "out"}, {"realdir", "linkdir"}} {
				if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
					t.Skipf("symlinks not available: %v", err)
				}
			}
			if err := os.Link(filepath.Join(root, "hl.txt"), filepath.Join(outside, "hl.txt")); err != nil {
				t.Fatal(err)
			}

			got, err := run(t, newApplyPatch(), env, tt.patch)
			if tt.wantErr != "" || tt.errIs != nil {
				if err == nil {
					t.Fatalf("patch applied: %s", got)
				}
				if tt.errIs != nil && !errors.Is(err, tt.errIs) {
					t.Errorf("error %v does not match %v", err, tt.errIs)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error:\n%s\nwant it to contain:\n%s", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "no file was changed") && tt.errIs == nil {
					t.Errorf("error %q does not say that nothing was changed", err)
				}
				if strings.Contains(err.Error(), root+"/") {
					t.Errorf("error %q shows an absolute path", err)
				}
				checkUnchanged(t, root, base)
				if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "secret\n" {
					t.Errorf("the file outside was changed to %q", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.out != "" && got != tt.out {
				t.Errorf("result:\n%s\nwant:\n%s", got, tt.out)
			}
			for _, h := range tt.has {
				if !strings.Contains(got, h) {
					t.Errorf("result:\n%s\nwant it to contain:\n%s", clip(got), h)
				}
			}
			for name, want := range tt.want {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
				switch {
				case want == deleted:
					if !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s still exists (%v)", name, err)
					}
				case err != nil || string(data) != want:
					t.Errorf("%s holds %q, %v; want %q", name, clip(string(data)), err, clip(want))
				}
			}
			if fi, err := os.Stat(filepath.Join(root, "bin", "run.sh")); err == nil && fi.Mode().Perm()&0o100 == 0 {
				t.Errorf("the moved script lost its mode: %v", fi.Mode())
			}
		})
	}
}

// checkUnchanged checks that every file of files still holds its content
// and that no other regular file appeared at the top of root.
func checkUnchanged(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || string(data) != want {
			t.Errorf("%s holds %q, %v; want %q unchanged", name, clip(string(data)), err, clip(want))
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok && e.Type().IsRegular() {
			t.Errorf("%s was created", e.Name())
		}
	}
}

func TestApplyPatchGuard(t *testing.T) {
	t.Parallel()
	env, root := newGuardedEnv(t)
	files := map[string]string{"a.txt": "a\n", "b.txt": "b\n"}
	writeFiles(t, root, files)
	apply := func(lines ...string) (string, error) {
		t.Helper()
		return run(t, newApplyPatch(), env, patchArgs(lines...))
	}
	update := func(path, from, to string) []string {
		return []string{"*** Begin Patch", "*** Add File: new.txt", "+n", "*** Update File: " + path,
			"@@", "-" + from, "+" + to, "*** End Patch"}
	}

	_, err := apply(update("a.txt", "a", "A")...)
	if !errors.Is(err, tools.ErrFileNotRead) || !strings.Contains(err.Error(), "a.txt has not been read in this session") {
		t.Fatalf("patch before read: %v", err)
	}
	checkUnchanged(t, root, files)
	if _, err := apply("*** Begin Patch", "*** Delete File: b.txt", "*** End Patch"); !errors.Is(err, tools.ErrFileNotRead) {
		t.Fatalf("delete before read: %v", err)
	}

	if _, err := run(t, newReadFile(), env, `{"path":"a.txt"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := apply(update("a.txt", "a", "A")...); err != nil {
		t.Fatalf("patch after read: %v", err)
	}
	// The patch's own writes count as reads, for a.txt and the new file.
	if _, err := apply("*** Begin Patch", "*** Update File: a.txt", "@@", "-A", "+AA",
		"*** Update File: new.txt", "@@", "-n", "+N", "*** End Patch"); err != nil {
		t.Fatalf("second patch: %v", err)
	}
	changeOnDisk(t, filepath.Join(root, "a.txt"), "changed\n")
	if _, err := apply("*** Begin Patch", "*** Update File: a.txt", "@@", "-changed", "+x", "*** End Patch"); !errors.Is(err, tools.ErrFileChanged) {
		t.Fatalf("patch after outside change: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(data) != "changed\n" {
		t.Errorf("a.txt = %q", data)
	}
}
