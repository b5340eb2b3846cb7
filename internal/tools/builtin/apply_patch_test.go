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
