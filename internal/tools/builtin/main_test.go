package builtin

import (
	"os"
	"testing"

	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// TestMain lets the test binary serve as the sandbox helper, as the
// mx-claw binary does, for the tests that run commands in a real sandbox.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args, os.Stderr))
	}
	os.Exit(m.Run())
}
