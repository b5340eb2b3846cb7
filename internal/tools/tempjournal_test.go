package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTempJournal: an atomic write lists its temporary file in the
// process's journal before creating it; a later start removes what a dead
// process's list names and still exists, and nothing else.
func TestTempJournal(t *testing.T) {
	t.Parallel()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(t.TempDir(), "tmp")
	j := NewTempJournal(dir)
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WithTempJournal(j).WriteFileAtomic("src/a.go", []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, fmt.Sprintf("%d.list", os.Getpid()))
	data, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	tmp := strings.TrimSpace(string(data))
	if filepath.Dir(tmp) != filepath.Join(root, "src") || !strings.HasPrefix(filepath.Base(tmp), ".a.go.tmp-") {
		t.Fatalf("journal lists %q", tmp)
	}
	// As if the process had been killed between creating the file and
	// renaming it, under another pid.
	if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "src", ".b.go.tmp-1")
	os.WriteFile(other, []byte("not listed"), 0o644)
	os.WriteFile(filepath.Join(dir, "999999.list"), append(data, []byte("relative/.x.tmp-1\n"+filepath.Join(root, "src", "a.go")+"\n")...), 0o600)

	if got := CleanTempJournals(dir, func(int) bool { return true }); len(got) != 0 {
		t.Errorf("removed %v for a live process", got)
	}
	got := CleanTempJournals(dir, func(int) bool { return false })
	if len(got) != 1 || got[0] != tmp {
		t.Errorf("removed %v, want only %s", got, tmp)
	}
	for _, p := range []string{other, filepath.Join(root, "src", "a.go"), own} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the journal's own list outlived Close: %v", err)
	}
}
