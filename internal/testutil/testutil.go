// Package testutil holds helpers shared by tests of several packages. Only
// _test.go files import it; it imports nothing of mx-claw.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// StreamsDir finds shared/testdata/provider-streams (the recorded provider
// streams) by walking up from the test's working directory, or skips the
// test saying why.
func StreamsDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Skipf("recorded streams not found: %v", err)
	}
	for {
		p := filepath.Join(dir, "shared", "testdata", "provider-streams")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("recorded streams not found: no shared/testdata/provider-streams above the working directory")
		}
		dir = parent
	}
}
