package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeFiles fills the fixture's workspace with n small files in
// directories of 100.
func (f *fixture) writeFiles(n int) {
	f.t.Helper()
	for i := range n {
		f.write(fmt.Sprintf("d%03d/f%04d.txt", i/100, i), fmt.Sprintf("file %d\n", i))
	}
}

// coldEntries is what a store that never warmed up snapshots of root.
func coldEntries(t *testing.T, root string) map[string]Entry {
	t.Helper()
	m := NewManager(filepath.Join(t.TempDir(), "cold"), Limits{NoWatch: true}, nil)
	defer m.Close()
	s, err := m.For(root)
	if err != nil {
		t.Fatal(err)
	}
	man, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return man.Entries
}

// sameContents fails unless got and want hold the same paths with the
// same kind and contents.
func sameContents(t *testing.T, got, want map[string]Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok || g.OID != w.OID || g.Mode != w.Mode || g.Size != w.Size {
			t.Fatalf("%s: %+v, want %+v", p, g, w)
		}
	}
}

// published returns how many entries the running warm-up has published.
func published(s *Store) int {
	s.mu.Lock()
	wu := s.warm
	s.mu.Unlock()
	if wu == nil {
		return 0
	}
	wu.mu.Lock()
	defer wu.mu.Unlock()
	return len(wu.entries)
}

func waitWarm(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.WaitWarm(ctx); err != nil {
		t.Fatalf("the warm-up did not end: %v", err)
	}
}

// TestWarmUpThenSnapshotReadsNothing: after a finished warm-up the first
// snapshot reads no file, and sees what changed since the warm-up.
func TestWarmUpThenSnapshotReadsNothing(t *testing.T) {
	t.Parallel()
	for _, lim := range []Limits{{}, {NoWatch: true}} {
		t.Run(fmt.Sprintf("NoWatch=%v", lim.NoWatch), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, lim)
			f.writeFiles(300)
			// Past the racy window: files just written would be read
			// again (racy entries), whoever saved them.
			time.Sleep(racyWindow + 50*time.Millisecond)
			f.store.WarmUp()
			waitWarm(t, f.store)
			if n := f.store.reads.Load(); n != 300 {
				t.Errorf("the warm-up read %d files, want 300", n)
			}
			m, err := f.store.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := f.store.reads.Load(); n != 300 {
				t.Errorf("the first snapshot read %d files after the warm-up", n-300)
			}
			sameContents(t, m.Entries, coldEntries(t, f.root))
			// A change after the warm-up is seen by the next snapshot.
			f.write("d001/f0150.txt", "changed\n")
			f.write("new.txt", "new\n")
			m, err = f.store.Snapshot(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sameContents(t, m.Entries, coldEntries(t, f.root))
			if n := f.store.reads.Load(); n != 302 {
				t.Errorf("%d files read for two changes", n-300)
			}
		})
	}
}

// TestSnapshotDuringWarmUpTakesOver: a snapshot asked for while the
// warm-up runs stops it and reads only what it had not saved; the result
// is the workspace as a cold snapshot sees it.
func TestSnapshotDuringWarmUpTakesOver(t *testing.T) {
	t.Parallel()
	const n = 600
	f := newFixture(t, Limits{})
	f.writeFiles(n)
	time.Sleep(racyWindow + 50*time.Millisecond) // no racy entries
	f.store.WarmUp()
	deadline := time.Now().Add(time.Minute)
	for published(f.store) < 150 {
		if time.Now().After(deadline) {
			t.Fatal("the warm-up saved fewer than 150 files in a minute")
		}
		time.Sleep(2 * time.Millisecond)
	}
	m, err := f.store.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitWarm(t, f.store)
	sameContents(t, m.Entries, coldEntries(t, f.root))
	// Each file read once, but for those the warm-up had read and not yet
	// published when it was stopped.
	if reads := f.store.reads.Load(); reads < n || reads > n+warmPublish+1 {
		t.Errorf("%d files read in all for %d files", reads, n)
	}
}

// TestCloseStopsWarmUpAndKeepsWhatItSaved: Close ends a warm-up at once;
// the next process's first snapshot reads only what it had not saved.
func TestCloseStopsWarmUpAndKeepsWhatItSaved(t *testing.T) {
	t.Parallel()
	const n = 600
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root}
	f.writeFiles(n)
	time.Sleep(racyWindow + 50*time.Millisecond) // no racy entries
	dir := filepath.Join(t.TempDir(), "checkpoints")
	m1 := NewManager(dir, Limits{}, nil)
	s1, err := m1.For(root)
	if err != nil {
		t.Fatal(err)
	}
	s1.WarmUp()
	deadline := time.Now().Add(time.Minute)
	for published(s1) < 150 {
		if time.Now().After(deadline) {
			t.Fatal("the warm-up saved fewer than 150 files in a minute")
		}
		time.Sleep(2 * time.Millisecond)
	}
	start := time.Now()
	if err := m1.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v with a warm-up running", d)
	}
	saved := s1.reads.Load()
	if saved >= n {
		t.Skipf("the warm-up finished (%d files) before Close stopped it", saved)
	}
	m2 := NewManager(dir, Limits{}, nil)
	defer m2.Close()
	s2, err := m2.For(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reads := s2.reads.Load(); reads > n-saved+warmPublish {
		t.Errorf("the next process read %d files; the warm-up had saved %d of %d", reads, saved, n)
	}
}

// TestWarmUpOnce: a second WarmUp, or one after a snapshot, starts
// nothing.
func TestWarmUpOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Limits{NoWatch: true})
	f.writeFiles(50)
	if _, err := f.store.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.store.WarmUp()
	if f.store.warm != nil {
		t.Error("a warm-up started after a whole snapshot")
	}
	g := newFixture(t, Limits{NoWatch: true})
	g.writeFiles(50)
	g.store.WarmUp()
	first := g.store.warm
	g.store.WarmUp()
	if g.store.warm != first {
		t.Error("a second warm-up started")
	}
	waitWarm(t, g.store)
	if n := g.store.reads.Load(); n != 50 {
		t.Errorf("%d files read", n)
	}
	if _, err := os.Stat(filepath.Join(g.store.Dir(), "mx-claw-index")); err != nil {
		g.store.Flush()
		if _, err := os.Stat(filepath.Join(g.store.Dir(), "mx-claw-index")); err != nil {
			t.Errorf("the finished warm-up's stat cache was not saved: %v", err)
		}
	}
}
