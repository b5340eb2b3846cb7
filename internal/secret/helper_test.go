package secret

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// helperVar makes the test binary act as one of the helper processes
// below instead of running tests.
const helperVar = "MX_CLAW_SECRET_TEST_HELPER"

// TestHelperProcess is not a test: re-executed with helperVar set, it is a
// second process for the tests that need one (concurrent writers, a crash
// half-way through a write, a secret command whose stderr must stay
// hidden).
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperVar)
	if mode == "" {
		return
	}
	ctx := context.Background()
	dir := os.Getenv("HELPER_DIR")
	switch mode {
	case "writer":
		n, _ := strconv.Atoi(os.Getenv("HELPER_N"))
		f := &File{Dir: dir}
		for i := range n {
			key := fmt.Sprintf("provider:%s-%d", os.Getenv("HELPER_PREFIX"), i)
			if err := f.Set(ctx, key, "value-of-"+key); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	case "crash":
		f := &File{Dir: dir, beforeRename: func(string) error {
			os.Exit(3) // die with the temporary file written, before the rename
			return nil
		}}
		_ = f.Set(ctx, "provider:crash", "never-stored")
		os.Exit(1) // not reached
	case "command":
		c := &Command{Script: os.Getenv("HELPER_SCRIPT"), Getenv: os.Getenv}
		v, err := c.Get(ctx, "provider:x")
		fmt.Printf("value=%q err=%v\n", v, err)
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", mode)
		os.Exit(2)
	}
	os.Exit(0)
}

// helper returns the command that runs TestHelperProcess as mode.
func helper(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperVar+"="+mode), env...)
	return cmd
}

// fakeEnv is an environment for Getenv.
func fakeEnv(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}
