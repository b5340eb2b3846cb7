package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchWorkspace makes a workspace of 10,000 files in 100 directories,
// with a .gitignore and an ignored build directory, and returns its store
// after the first (slow) snapshot.
func benchWorkspace(b *testing.B, lim Limits) (*Store, string) {
	b.Helper()
	root := benchFiles(b)
	m := NewManager(filepath.Join(b.TempDir(), "checkpoints"), lim, nil)
	b.Cleanup(func() { m.Close() })
	s, err := m.For(root)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	first, err := s.Snapshot(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if len(first.Entries) != 10_000+100+1+1 { // files, directories, pkg/, .gitignore
		b.Fatalf("%d entries", len(first.Entries))
	}
	b.Logf("first snapshot of %d entries: %v", len(first.Entries), time.Since(start))
	// Past the racy window, as a workspace is between two commands.
	time.Sleep(racyWindow + 50*time.Millisecond)
	if _, err := s.Snapshot(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, root
}

// benchFiles makes the workspace of benchWorkspace and returns its root.
func benchFiles(b *testing.B) string {
	b.Helper()
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		dir := filepath.Join(root, "pkg", fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range 100 {
			text := fmt.Sprintf("package d%03d\n\n// File %d of directory %d.\nfunc F%d() int { return %d }\n", d, i, d, i, i*d)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	os.MkdirAll(filepath.Join(root, "build"), 0o755)
	os.WriteFile(filepath.Join(root, "build", "out"), []byte("ignored"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n*.log\n"), 0o644)
	// Past the racy window, as a workspace's files are when a session
	// starts.
	time.Sleep(racyWindow + 50*time.Millisecond)
	return root
}

// BenchmarkCheckpointCommand is the checkpoint taken before a command
// that is not read-only, in a 10,000-file workspace, after the first: on
// Linux, the watcher's events read and nothing else.
func BenchmarkCheckpointCommand(b *testing.B) { benchCheckpoint(b, Limits{}) }

// BenchmarkCheckpointCommandWalk is the same checkpoint without the
// watcher, as on other systems: a walk that honours .gitignore and a stat
// of every file, nothing read.
func BenchmarkCheckpointCommandWalk(b *testing.B) { benchCheckpoint(b, Limits{NoWatch: true}) }

func benchCheckpoint(b *testing.B, lim Limits) {
	s, _ := benchWorkspace(b, lim)
	ctx := context.Background()
	reads := s.reads.Load()
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/checkpoint")
	if c := cpuTime() - cpu; c > 0 {
		// CPU time is what the machine's load does not inflate.
		b.ReportMetric(float64(c.Microseconds())/float64(b.N)/1000, "cpu-ms/checkpoint")
	}
	if n := s.reads.Load() - reads; n != 0 {
		b.Errorf("unchanged files were read %d times", n)
	}
}

// BenchmarkCheckpointAfterEdit is a checkpoint after a command changed
// one file: that file is read and saved, the rest not looked at (with the
// watcher) or only stat'ed (without).
func BenchmarkCheckpointAfterEdit(b *testing.B) { benchAfterEdit(b, Limits{}) }

// BenchmarkCheckpointAfterEditWalk is BenchmarkCheckpointAfterEdit
// without the watcher.
func BenchmarkCheckpointAfterEditWalk(b *testing.B) { benchAfterEdit(b, Limits{NoWatch: true}) }

func benchAfterEdit(b *testing.B, lim Limits) {
	s, root := benchWorkspace(b, lim)
	ctx := context.Background()
	p := filepath.Join(root, "pkg", "d050", "f050.go")
	b.ResetTimer()
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		os.WriteFile(p, []byte(fmt.Sprintf("package d050\n// edit %d\n", i)), 0o644)
		b.StartTimer()
		if _, err := s.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/checkpoint")
}
