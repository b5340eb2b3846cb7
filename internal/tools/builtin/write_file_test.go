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

func TestWriteFile(t *testing.T) {
	t.Parallel()
	env, root := newEnv(t)
	outside := t.TempDir()
	writeFiles(t, root, map[string]string{
		"existing.sh": "#!/bin/sh\necho old\n",
		".git/config": "[core]\n",
	})
	if err := os.Chmod(filepath.Join(root, "existing.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}

	tests := []struct {
		name     string
		path     string
		content  string
		want     string
		wantMode os.FileMode // 0: new-file mode (0644 less umask)
		wantErr  error
		errHas   string
	}{
		{name: "create", path: "new.txt", content: "hello", want: "Wrote 5 bytes to new.txt (created)"},
		{name: "create with parents", path: "a/b/c.txt", content: "x", want: "Wrote 1 bytes to a/b/c.txt (created)"},
		{name: "crlf kept", path: "win.txt", content: "one\r\ntwo\r\n", want: "Wrote 10 bytes to win.txt (created)"},
		{name: "empty", path: "empty.txt", content: "", want: "Wrote 0 bytes to empty.txt (created)"},
		{name: "unicode", path: "uni.txt", content: "日本語", want: "Wrote 9 bytes to uni.txt (created)"},
		{
			name: "overwrite keeps mode", path: "existing.sh", content: "#!/bin/sh\necho new\n",
			want: "Wrote 19 bytes to existing.sh (overwritten)\n\n--- a/existing.sh\n+++ b/existing.sh\n" +
				"@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo old\n+echo new\n",
			wantMode: 0o700,
		},
		{name: "absolute inside", path: filepath.Join(root, "abs.txt"), content: "a", want: "Wrote 1 bytes to abs.txt (created)"},
		{name: "git refused", path: ".git/config", content: "evil", wantErr: tools.ErrGitInternals, errHas: "refusing to write .git/config"},
		{name: "git hook refused", path: ".git/hooks/post-checkout", content: "evil", wantErr: tools.ErrGitInternals},
		{name: "outside refused", path: "../escape.txt", content: "x", wantErr: tools.ErrOutsideWorkspace},
		{name: "symlink out refused", path: "out/escape.txt", content: "x", wantErr: tools.ErrOutsideWorkspace},
		{name: "directory refused", path: "a", content: "x", errHas: "write a: is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := fmt.Sprintf(`{"path":%q,"content":%q}`, tt.path, tt.content)
			if tt.name == "directory refused" {
				// Wait for "create with parents" by making the directory here.
				if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := run(t, newWriteFile(), env, args)
			if tt.wantErr != nil || tt.errHas != "" {
				if err == nil {
					t.Fatalf("write succeeded: %s", got)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("error %v does not match %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not contain %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
			p := tt.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			data, err := os.ReadFile(p)
			if err != nil || string(data) != tt.content {
				t.Errorf("file holds %q, %v; want %q", data, err, tt.content)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			perm := fi.Mode().Perm()
			if tt.wantMode != 0 && perm != tt.wantMode {
				t.Errorf("mode = %v, want %v", perm, tt.wantMode)
			}
			if tt.wantMode == 0 && (perm&^0o644 != 0 || perm&0o600 != 0o600) {
				t.Errorf("mode = %v, want 0644 less umask", perm)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(data) != "[core]\n" {
		t.Errorf(".git/config was changed to %q", data)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a file was written outside the workspace: %v", entries)
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
