package builtin

import (
	"path/filepath"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func TestGlobAllowedDirectory(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, extra, map[string]string{"lib/x.go": "package lib\n// needle\n"})
	w, err := tools.NewWorkspace(root, extra)
	if err != nil {
		t.Fatal(err)
	}
	ws := &tools.Env{Workspace: w}
	got, err := run(t, newGlob(), ws, `{"pattern":"**/*.go","path":"`+extra+`"}`)
	if want := filepath.Join(extra, "lib", "x.go") + "\n"; err != nil || got != want {
		t.Errorf("glob in an allowed directory = %q, %v; want %q", got, err, want)
	}
	forEachEngine(t, func(t *testing.T, newTool func() *grep) {
		got, err := run(t, newTool(), ws, `{"pattern":"needle","path":"`+extra+`"}`)
		if want := filepath.Join(extra, "lib", "x.go") + ":2:// needle\n"; err != nil || got != want {
			t.Errorf("grep in an allowed directory = %q, %v; want %q", got, err, want)
		}
	})
}

func TestGlobSummary(t *testing.T) {
	t.Parallel()
	tests := []struct{ args, want string }{
		{`{"pattern":"**/*.go"}`, "Glob **/*.go"},
		{`{"pattern":"*.md","path":"docs/"}`, "Glob *.md in docs"},
		{`{"pattern":"*.md","path":"."}`, "Glob *.md"},
	}
	for _, tt := range tests {
		if got := newGlob().Summary([]byte(tt.args)); got != tt.want {
			t.Errorf("Summary(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
