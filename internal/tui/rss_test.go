//go:build linux

package tui

import (
	"runtime"
	"syscall"
	"testing"
)

// TestRSSThousandMessages plays a 1,000-message session (about 1 KB tool
// results, 500-byte answers) through the Model, streams a 2,000-token
// answer, and checks the peak RSS stays under 100 MB (issue 6). Maxrss is
// the peak of the whole test process (in KB on Linux), so it bounds the
// session's from above.
func TestRSSThousandMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: plays a 1,000-message session")
	}
	var printed int
	s := &streamer{m: streamModel(t, 1000, &printed)}
	for range answerTokens {
		s.delta()
	}
	s.restart()
	runtime.KeepAlive(s.m)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	peakMB := float64(ru.Maxrss) / 1024
	t.Logf("1,000-message session, %d KB printed: peak RSS %.1f MB (heap in use %.1f MB, %d GCs)",
		printed>>10, peakMB, float64(ms.HeapInuse)/(1<<20), ms.NumGC)
	if peakMB > 100 {
		t.Errorf("peak RSS %.1f MB, want under 100 MB", peakMB)
	}
}
