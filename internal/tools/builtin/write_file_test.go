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
			want: "Wrote 19 bytes to existing.sh (overwritten)", wantMode: 0o700,
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
