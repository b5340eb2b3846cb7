package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func TestListDir(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	writeFiles(t, root, map[string]string{
		".gitignore":           "# build output\nbin/\n*.log\n!keep.log\n/root-only.txt\ndocs/**/draft.md\n",
		".git/HEAD":            "ref: refs/heads/main\n",
		"README.md":            strings.Repeat("x", 1500),
		"main.go":              "package main\n",
		"bin/tool":             "binary",
		"debug.log":            "log",
		"keep.log":             "kept",
		"root-only.txt":        "ignored at the root only",
		"src/root-only.txt":    "not ignored here",
		"src/app/app.go":       "package app\n",
		"src/app/deep/d.go":    "package deep\n",
		"src/app/deep/e.go":    "package deep\n",
		"src/trace.log":        "ignored at any depth",
		"docs/a/b/draft.md":    "ignored",
		"docs/a/b/final.md":    "kept",
		"sub/.git/config":      "nested repo",
		"sub/readme.txt":       "hi",
		"weird name [1].txt":   "x",
		"zeta/.keep":           "",
		"zeta/inner/.gitkeep":  "",
		"zeta/inner/more/file": "",
	})
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src/app", filepath.Join(root, "applink")); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}

	tests := []struct {
		name    string
		tool    *listDir
		args    string
		want    string
		wantErr string
	}{
		{
			name: "default depth", tool: newListDir(), args: `{}`,
			want: `./
  .gitignore (68 B)
  README.md (1.5 KiB)
  applink -> src/app
  docs/
    a/ (1 entry)
  empty/ (empty)
  keep.log (4 B)
  main.go (13 B)
  src/
    app/ (2 entries)
    root-only.txt (16 B)
  sub/
    readme.txt (2 B)
  weird name [1].txt (1 B)
  zeta/
    .keep (0 B)
    inner/ (2 entries)
[Skipped .git and 4 entries matched by .gitignore.]
`,
		},
		{
			name: "subdirectory deeper", tool: newListDir(), args: `{"path":"src","depth":5}`,
			want: `src/
  app/
    app.go (12 B)
    deep/
      d.go (13 B)
      e.go (13 B)
  root-only.txt (16 B)
[Skipped 1 entry matched by .gitignore.]
`,
		},
		{
			name: "anchored double star", tool: newListDir(), args: `{"path":"docs","depth":3}`,
			want: `docs/
  a/
    b/
      final.md (4 B)
[Skipped 1 entry matched by .gitignore.]
`,
		},
		{
			name: "depth one", tool: newListDir(), args: `{"path":"zeta","depth":1}`,
			want: `zeta/
  .keep (0 B)
  inner/ (2 entries)
`,
		},
		{
			name: "cap", tool: &listDir{maxEntries: 3}, args: `{"path":"src","depth":5}`,
			want: `src/
  app/
    app.go (12 B)
  root-only.txt (16 B)
[… at least 1 more entry not shown (the listing is capped at 3). List a subdirectory, or use a smaller depth.]
[Skipped 1 entry matched by .gitignore.]
`,
		},
		{name: "empty dir", tool: newListDir(), args: `{"path":"empty"}`, want: "empty/ (empty)\n"},
		{name: "a file", tool: newListDir(), args: `{"path":"main.go"}`, wantErr: "main.go is a file, not a directory; use read_file to read it"},
		{name: "missing", tool: newListDir(), args: `{"path":"nope"}`, wantErr: "directory not found: nope"},
		{name: "outside", tool: newListDir(), args: `{"path":".."}`, wantErr: `path ".." is outside the workspace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := run(t, tt.tool, env, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("listing:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestListDirNestedGitignore(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, content := range map[string]string{
		".gitignore":           "*.log\n",
		"app/.gitignore":       "generated/\n",
		"app/main.go":          "package main\n",
		"app/generated/x.go":   "package gen\n",
		"app/debug.log":        "noise\n",
		"keep.txt":             "k\n",
		".git/info/exclude":    "secret.txt\n",
		"secret.txt":           "s\n",
		"app/nested/deeper.go": "package nested\n",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newListDir().Run(context.Background(), &tools.Env{Workspace: ws}, json.RawMessage(`{"depth":3}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []string{"generated", "debug.log", "secret.txt"} {
		if strings.Contains(res.Content, hidden) && !strings.Contains(res.Content, "matched by .gitignore") {
			t.Errorf("%s listed:\n%s", hidden, res.Content)
		}
		if strings.Contains(res.Content, hidden+" ") || strings.Contains(res.Content, hidden+"/") {
			t.Errorf("%s listed:\n%s", hidden, res.Content)
		}
	}
	for _, shown := range []string{"main.go", "keep.txt", "deeper.go"} {
		if !strings.Contains(res.Content, shown) {
			t.Errorf("%s missing:\n%s", shown, res.Content)
		}
	}
}
