package tools

import (
	"errors"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeInfo is an fs.FileInfo with a settable time and size.
type fakeInfo struct {
	size int64
	mod  time.Time
}

func (f fakeInfo) Name() string       { return "f" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return f.mod }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }

func TestFileTracker(t *testing.T) {
	t.Parallel()
	root := "/ws"
	abs := "/ws/src/a.go"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	data := []byte("hello\n")
	info := fakeInfo{size: int64(len(data)), mod: t0}

	tests := []struct {
		name    string
		setup   func(*FileTracker)
		fi      fs.FileInfo
		current []byte
		wantErr error
		msg     string
	}{
		{
			name: "never read", setup: func(*FileTracker) {}, fi: info, current: data,
			wantErr: ErrFileNotRead, msg: "src/a.go has not been read in this session; read it with read_file before editing it",
		},
		{name: "read, unchanged", setup: func(ft *FileTracker) { ft.RecordRead(abs, data, info) }, fi: info, current: data},
		{name: "written, unchanged", setup: func(ft *FileTracker) { ft.RecordWrite(abs, data, info) }, fi: info, current: data},
		{
			name: "touched, same content", setup: func(ft *FileTracker) { ft.RecordRead(abs, data, info) },
			fi: fakeInfo{size: info.size, mod: t0.Add(time.Hour)}, current: data,
		},
		{
			name: "changed", setup: func(ft *FileTracker) { ft.RecordRead(abs, data, info) },
			fi: fakeInfo{size: 4, mod: t0.Add(time.Minute)}, current: []byte("bye\n"), wantErr: ErrFileChanged,
			msg: "src/a.go changed on disk since it was last read (modified " + t0.Add(time.Minute).Format(time.DateTime) +
				"); read it again before editing it",
		},
		{
			name: "same time and size is trusted", setup: func(ft *FileTracker) { ft.RecordRead(abs, data, info) },
			fi: info, current: []byte("HELLO\n"),
		},
		{
			name: "no file info compares contents", setup: func(ft *FileTracker) { ft.RecordRead(abs, data, nil) },
			fi: nil, current: []byte("x"), wantErr: ErrFileChanged, msg: "(modified at an unknown time)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := NewFileTracker(root)
			tt.setup(ft)
			err := ft.Check(abs, tt.fi, tt.current)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v does not match %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
		})
	}
}

func TestFileTrackerRefreshesTime(t *testing.T) {
	t.Parallel()
	var ft FileTracker // the zero value works and shows absolute paths
	t0 := time.Now()
	ft.RecordRead("/x", []byte("a"), fakeInfo{size: 1, mod: t0})
	later := fakeInfo{size: 1, mod: t0.Add(time.Second)}
	if err := ft.Check("/x", later, []byte("a")); err != nil {
		t.Fatal(err)
	}
	// The new time was remembered: contents are no longer compared.
	if err := ft.Check("/x", later, []byte("b")); err != nil {
		t.Errorf("check after refresh: %v", err)
	}
	if err := ft.Check("/y", later, nil); err == nil || !strings.HasPrefix(err.Error(), "/y has not been read") {
		t.Errorf("zero tracker error = %v", err)
	}
}

// TestFileTrackerRealFile checks the guard against real file information:
// a rewrite with the same size but a new time is caught by the hash.
func TestFileTrackerRealFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	ft := NewFileTracker(dir)
	ft.RecordRead(p, []byte("one\n"), fi)
	if err := os.WriteFile(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(p)
	err := ft.Check(p, fi, []byte("two\n"))
	if !errors.Is(err, ErrFileChanged) || !strings.HasPrefix(err.Error(), "f.txt changed on disk") {
		t.Errorf("error = %v", err)
	}
}

func TestFileTrackerConcurrent(t *testing.T) {
	t.Parallel()
	ft := NewFileTracker("/ws")
	info := fakeInfo{size: 1, mod: time.Now()}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				p := filepath.Join("/ws", string(rune('a'+i)), string(rune('a'+j%26)))
				ft.RecordRead(p, []byte("x"), info)
				_ = ft.Check(p, info, []byte("x"))
				ft.RecordWrite(p, []byte("y"), info)
			}
		})
	}
	wg.Wait()
}

func TestFileTrackerRestoreFromRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []protocol.FileVersion
	first := NewFileTracker(dir)
	first.SetOnRecord(func(v protocol.FileVersion) { kept = append(kept, v) })
	first.RecordRead(p, []byte("one"), fi)
	if len(kept) != 1 || kept[0].Path != p || len(kept[0].SHA256) != 64 {
		t.Fatalf("recorded %+v", kept)
	}

	// Another process restores what the first one recorded.
	second := NewFileTracker(dir)
	if err := second.Check(p, fi, []byte("one")); err == nil {
		t.Fatal("an empty tracker passed an unread file")
	}
	second.Restore(append(kept, protocol.FileVersion{Path: "/bad", SHA256: "zz"}))
	if err := second.Check(p, fi, []byte("one")); err != nil {
		t.Errorf("restored tracker: %v", err)
	}
	if err := os.WriteFile(p, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(p)
	if err := second.Check(p, fi2, []byte("changed")); !errors.Is(err, ErrFileChanged) {
		t.Errorf("changed file after restore: %v", err)
	}
}
