// Package testutil holds helpers shared by tests of several packages. Only
// _test.go files import it; it imports nothing of mx-claw.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// StreamsDir finds shared/testdata/provider-streams (the recorded provider
// streams) by walking up from the test's working directory. Where it is
// missing the test skips saying why — except in CI (CI=true), which lays
// shared/ beside its clone of the repository: there a missing directory
// is a broken setup, and the test fails rather than passing unseen.
func StreamsDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		missing(t, err.Error(), InCI())
		return ""
	}
	return streamsFrom(t, dir, InCI())
}

// InCI reports whether the tests run in CI: the CI variable is true, as
// .ci/run and most CI systems set it.
func InCI() bool { return os.Getenv("CI") == "true" }

// streamsFrom looks for the streams from dir upwards.
func streamsFrom(t testing.TB, dir string, ci bool) string {
	t.Helper()
	for {
		p := filepath.Join(dir, "shared", "testdata", "provider-streams")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			missing(t, "no shared/testdata/provider-streams above the working directory", ci)
			return ""
		}
		dir = parent
	}
}

// missing skips the test, or fails it in CI.
func missing(t testing.TB, why string, ci bool) {
	t.Helper()
	if ci {
		t.Fatalf("recorded streams not found: %s; CI lays shared/ beside the clone, so its data must be there", why)
	}
	t.Skipf("recorded streams not found: %s", why)
}
