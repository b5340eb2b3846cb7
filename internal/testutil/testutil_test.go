package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// outcomeTB records how a helper ended a test: Fatalf and Skipf stop the
// goroutine, as the real ones do.
type outcomeTB struct {
	testing.TB
	failed, skipped string
}

func (o *outcomeTB) Helper() {}
func (o *outcomeTB) Fatalf(f string, a ...any) {
	o.failed = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (o *outcomeTB) Skipf(f string, a ...any) {
	o.skipped = fmt.Sprintf(f, a...)
	runtime.Goexit()
}

func lookFrom(t *testing.T, dir string, ci bool) (*outcomeTB, string) {
	o := &outcomeTB{TB: t}
	var got string
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = streamsFrom(o, dir, ci)
	}()
	<-done
	return o, got
}

// Without the recorded streams a test skips on a developer's machine and
// fails in CI; with them it gets their directory.
func TestStreamsMissingFailsInCI(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	if o, _ := lookFrom(t, empty, false); o.skipped == "" || o.failed != "" {
		t.Errorf("outside CI: skipped %q, failed %q; want a skip", o.skipped, o.failed)
	}
	if o, _ := lookFrom(t, empty, true); o.failed == "" {
		t.Errorf("in CI: skipped %q; want a failure", o.skipped)
	}
	root := t.TempDir()
	want := filepath.Join(root, "shared", "testdata", "provider-streams")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "repo", "internal", "llm")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if o, got := lookFrom(t, sub, true); got != want || o.failed != "" {
		t.Errorf("found %q (failed %q), want %q", got, o.failed, want)
	}
}
