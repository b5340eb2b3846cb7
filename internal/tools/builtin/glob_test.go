package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	files := []string{ // oldest first
		"a.go", "b.go", "sub/c.go", "sub/deep/d_test.go", "docs/x.md",
		".github/workflows/ci.yml", "build/gen.go", ".git/config", "$(touch pwned).go",
		"-rf.go", "sub/.gitignore", "sub/skip.tmp", "same1.txt", "same2.txt",
	}
	content := map[string]string{}
	for _, f := range files {
		content[f] = "x"
	}
	content[".gitignore"] = "build/\n"
	content["sub/.gitignore"] = "*.tmp\n"
	writeFiles(t, root, content)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range files {
		mt := base.Add(time.Duration(i) * time.Hour)
		if strings.HasPrefix(f, "same") {
			mt = base.Add(100 * time.Hour)
		}
		if err := os.Chtimes(filepath.Join(root, f), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "outlink")); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}

	tests := []struct {
		name    string
		tool    *glob
		args    string
		want    string
		wantErr string
	}{
		{
			name: "any depth, newest first", args: `{"pattern":"**/*.go"}`,
			want: "-rf.go\n$(touch pwned).go\nsub/deep/d_test.go\nsub/c.go\nb.go\na.go\n",
		},
		{name: "top level only", args: `{"pattern":"*.go"}`, want: "-rf.go\n$(touch pwned).go\nb.go\na.go\n"},
		{name: "under a directory", args: `{"pattern":"sub/**/*.go"}`, want: "sub/deep/d_test.go\nsub/c.go\n"},
		{name: "alternatives and hidden", args: `{"pattern":"**/*.{md,yml}"}`, want: ".github/workflows/ci.yml\ndocs/x.md\n"},
		{name: "with path", args: `{"pattern":"*.go","path":"sub"}`, want: "sub/c.go\n"},
		{name: "with path and double star", args: `{"pattern":"**/*_test.go","path":"./sub/"}`, want: "sub/deep/d_test.go\n"},
		{name: "leading ./", args: `{"pattern":"./sub/*.go"}`, want: "sub/c.go\n"},
		{name: "ties by path", args: `{"pattern":"same*"}`, want: "same1.txt\nsame2.txt\n"},
		{name: "class", args: `{"pattern":"[ab].go"}`, want: "b.go\na.go\n"},
		{name: "a symlink is listed, not followed", args: `{"pattern":"outlink*"}`, want: "outlink\n"},
		{
			name: "ignored", args: `{"pattern":"**/{gen.go,*.tmp,config}"}`,
			want: "No files match `**/{gen.go,*.tmp,config}` in the workspace root. (Files ignored by .gitignore and .git are not searched.)",
		},
		{
			name: "no match hint", args: `{"pattern":"*.md"}`,
			want: "No files match `*.md` in the workspace root. A pattern without / matches only files directly in " +
				"the workspace root; use `**/*.md` to match at any depth. (Files ignored by .gitignore and .git are not searched.)",
		},
		{
			name: "missing literal directory", args: `{"pattern":"nope/**/*.go"}`,
			want: "No files match `nope/**/*.go` in the workspace root. (Files ignored by .gitignore and .git are not searched.)",
		},
		{
			name: "cap", tool: &glob{maxResults: 2}, args: `{"pattern":"**/*.go"}`,
			want: "-rf.go\n$(touch pwned).go\n[… and 4 more files; showing the 2 most recently modified of 6. " +
				"Narrow the pattern or give a path.]\n",
		},
		{name: "absolute", args: `{"pattern":"/etc/*"}`, wantErr: `glob pattern "/etc/*" is absolute`},
		{name: "dot dot", args: `{"pattern":"../*"}`, wantErr: `glob pattern "../*" contains ..`},
		{name: "invalid", args: `{"pattern":"[a"}`, wantErr: `invalid glob pattern "[a"`},
		{name: "empty", args: `{"pattern":"./"}`, wantErr: "empty glob pattern"},
		{name: "a file as path", args: `{"pattern":"*","path":"a.go"}`, wantErr: "a.go is a file, not a directory"},
		{name: "outside", args: `{"pattern":"*","path":".."}`, wantErr: `path ".." is outside the workspace`},
		{name: "symlink outside", args: `{"pattern":"*","path":"outlink"}`, wantErr: `path "outlink" is outside the workspace`},
		{name: "git", args: `{"pattern":"*","path":".git"}`, wantErr: ".git is inside .git; glob does not search git's internals"},
		{name: "missing", args: `{"pattern":"*","path":"nope"}`, wantErr: "path not found: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := tt.tool
			if tool == nil {
				tool = newGlob()
			}
			got, err := run(t, tool, env, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), root+"/") {
					t.Errorf("error %q shows an absolute path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

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
