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
