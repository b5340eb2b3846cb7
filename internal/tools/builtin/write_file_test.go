package builtin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// TestWriteFileNewFileMode checks the mode of created files: 0644 less the
// umask, which a fixture cannot know (the cases of write_file are
// fixtures, in testdata/fixtures/write_file).
func TestWriteFileNewFileMode(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	for _, p := range []string{"new.txt", "a/b/c.txt"} {
		if _, err := run(t, newWriteFile(), env, fmt.Sprintf(`{"path":%q,"content":"x"}`, p)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&^0o644 != 0 || perm&0o600 != 0o600 {
			t.Errorf("mode of %s = %v, want 0644 less umask", p, perm)
		}
	}
}

func TestWriteFileGuard(t *testing.T) {
	t.Parallel()
	env, root := newGuardedEnv(t)
	writeFiles(t, root, map[string]string{"w.txt": "old\n"})
	p := filepath.Join(root, "w.txt")
	write := func(path, content string) (string, error) {
		t.Helper()
		return run(t, newWriteFile(), env, fmt.Sprintf(`{"path":%q,"content":%q}`, path, content))
	}

	_, err := write("w.txt", "new\n")
	if !errors.Is(err, tools.ErrFileNotRead) ||
		err.Error() != "w.txt has not been read in this session; read it with read_file before editing it" {
		t.Fatalf("overwrite before read: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "old\n" {
		t.Fatalf("w.txt was overwritten: %q", data)
	}
	if _, err := run(t, newReadFile(), env, `{"path":"w.txt","limit":1}`); err != nil {
		t.Fatal(err)
	}
	got, err := write("w.txt", "new\n")
	if err != nil {
		t.Fatalf("overwrite after read: %v", err)
	}
	if want := "Wrote 4 bytes to w.txt (overwritten)\n\n--- a/w.txt\n+++ b/w.txt\n@@ -1 +1 @@\n-old\n+new\n"; got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
	if got, err := write("w.txt", "new\n"); err != nil || !strings.HasSuffix(got, "The content is unchanged.") {
		t.Errorf("rewrite of own write: %q, %v", got, err)
	}
	if _, err := write("fresh/n.txt", "n\n"); err != nil {
		t.Fatalf("create without read: %v", err)
	}
	if _, err := write("fresh/n.txt", "m\n"); err != nil {
		t.Fatalf("overwrite of a file the session created: %v", err)
	}
	changeOnDisk(t, p, "theirs\n")
	if _, err := write("w.txt", "mine\n"); !errors.Is(err, tools.ErrFileChanged) {
		t.Fatalf("overwrite after outside change: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "theirs\n" {
		t.Errorf("w.txt = %q", data)
	}
}
