package checkpoint

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The first command of a session in a 10,000-file workspace: the added
// latency is its checkpoint, the workspace's first whole snapshot in the
// process. Each iteration uses a new, empty store, as a first session in a
// workspace has.

// BenchmarkFirstCommandCold is the first checkpoint without a warm-up:
// every file read and saved while the command waits.
func BenchmarkFirstCommandCold(b *testing.B) { benchFirstCommand(b, -1) }

// BenchmarkFirstCommandWarmed is the first checkpoint after a warm-up
// that finished (the model took longer to ask for the command than the
// warm-up took).
func BenchmarkFirstCommandWarmed(b *testing.B) { benchFirstCommand(b, 0) }

// BenchmarkFirstCommandAfter1s is the first checkpoint of a command the
// model asks for 1 s after the turn started the warm-up: it reads what the
// warm-up had not reached.
func BenchmarkFirstCommandAfter1s(b *testing.B) { benchFirstCommand(b, time.Second) }

// BenchmarkFirstCommandAfter3s is BenchmarkFirstCommandAfter1s at 3 s.
func BenchmarkFirstCommandAfter3s(b *testing.B) { benchFirstCommand(b, 3*time.Second) }

// benchFirstCommand times the first Snapshot of a new store: without a
// warm-up (think < 0), after the warm-up ended (think == 0), or think
// after the warm-up began.
func benchFirstCommand(b *testing.B, think time.Duration) {
	root := benchFiles(b)
	ctx := context.Background()
	var warmReads, reads int64
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		dir := filepath.Join(b.TempDir(), "checkpoints")
		m := NewManager(dir, Limits{}, nil)
		s, err := m.For(root)
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case think == 0:
			s.WarmUp()
			if err := s.WaitWarm(ctx); err != nil {
				b.Fatal(err)
			}
		case think > 0:
			s.WarmUp()
			time.Sleep(think)
		}
		before := s.Stats().Reads
		b.StartTimer()
		if _, err := s.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		warmReads += before
		reads += s.Stats().Reads - before
		m.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/first-checkpoint")
	b.ReportMetric(float64(reads)/float64(b.N), "files-read-by-checkpoint")
	b.ReportMetric(float64(warmReads)/float64(b.N), "files-read-by-warm-up")
}

// BenchmarkWarmUpCost is what a whole warm-up of the 10,000-file
// workspace costs the process: its wall time, its CPU time, and how much
// slower a CPU-bound piece of work (standing for the turn) runs beside it
// than alone.
func BenchmarkWarmUpCost(b *testing.B) {
	root := benchFiles(b)
	ctx := context.Background()
	work := func() time.Duration {
		start := time.Now()
		data := make([]byte, 1<<20)
		for range 150 {
			sum := sha256.Sum256(data)
			data[0] = sum[0]
		}
		return time.Since(start)
	}
	var wall, cpu, alone, beside time.Duration
	for b.Loop() {
		b.StopTimer()
		alone += work()
		dir := filepath.Join(b.TempDir(), "checkpoints")
		m := NewManager(dir, Limits{}, nil)
		s, err := m.For(root)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0, t0 := cpuTime(), time.Now()
		s.WarmUp()
		beside += work()
		if err := s.WaitWarm(ctx); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		cpu += cpuTime() - c0
		b.StopTimer()
		if n := s.Stats().Reads; n != 10_001 {
			b.Errorf("the warm-up read %d files", n)
		}
		m.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall.Milliseconds())/n, "wall-ms/warm-up")
	b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu-ms/warm-up")
	b.ReportMetric(float64(cpu)/float64(wall), "cores")
	b.ReportMetric(float64(beside)/float64(alone), "work-slowdown")
}
