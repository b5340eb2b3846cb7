package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	write(t, small, []byte(`{"a":1}`))
	big := filepath.Join(dir, "big.json")
	write(t, big, make([]byte, 2<<20))
	exact := filepath.Join(dir, "exact")
	write(t, exact, make([]byte, 100))

	tests := []struct {
		name    string
		path    string
		max     int64
		want    string
		wantErr error
	}{
		{"regular", small, 0, `{"a":1}`, nil},
		{"2 MiB over the default cap", big, 0, "", ErrTooLarge},
		{"exactly the cap", exact, 100, strings.Repeat("\x00", 100), nil},
		{"one byte over", exact, 99, "", ErrTooLarge},
		{"directory", dir, 0, "", ErrNotRegular},
		{"missing", filepath.Join(dir, "missing"), 0, "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFile(tt.path, tt.max)
			if !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if string(got) != tt.want {
				t.Errorf("got %d bytes, want %d", len(got), len(tt.want))
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestReadFileErrorsSayWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "settings.json")
	write(t, big, make([]byte, 2<<20))
	_, err := ReadFile(big, 0)
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Errorf("2 MiB file: %v", err)
	}
	_, err = ReadFile(dir, 0)
	if err == nil || !strings.Contains(err.Error(), "it is a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestReadInTreeRefusesLinks(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write(t, filepath.Join(ws, "decoy", "settings.json"), []byte(`{}`))
	write(t, filepath.Join(ws, "real", "settings.json"), []byte(`{"ok":true}`))
	if err := os.Symlink("decoy", filepath.Join(ws, "linkdir")); err != nil {
		t.Skipf("symlinks not supported: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "linkfile"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, "decoy", "settings.json"), filepath.Join(ws, "linkfile", "settings.json")); err != nil {
		t.Fatal(err)
	}

	got, err := ReadInTree(ws, filepath.Join("real", "settings.json"), 0)
	if err != nil || string(got) != `{"ok":true}` {
		t.Fatalf("real file: %q, %v", got, err)
	}
	for _, rel := range []string{"linkdir/settings.json", "linkfile/settings.json"} {
		_, err := ReadInTree(ws, filepath.FromSlash(rel), 0)
		var le *LinkError
		if !errors.Is(err, ErrSymlink) || !errors.As(err, &le) {
			t.Fatalf("%s: err = %v, want a symlink error", rel, err)
		}
		if !strings.Contains(err.Error(), "is a symbolic link (to ") {
			t.Errorf("%s: message %q", rel, err)
		}
	}
	if _, err := ReadInTree(ws, filepath.Join("none", "settings.json"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestReadFS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".gitignore"), []byte("*.log\n"))
	write(t, filepath.Join(dir, "big"), make([]byte, 3<<20))
	fsys := os.DirFS(dir)
	if got, err := ReadFS(fsys, ".gitignore", 0); err != nil || string(got) != "*.log\n" {
		t.Errorf("regular: %q, %v", got, err)
	}
	if _, err := ReadFS(fsys, "big", 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: %v", err)
	}
	if _, err := ReadFS(fsys, ".", 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
}
