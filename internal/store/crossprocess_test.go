package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	helperEnv     = "MX_CLAW_STORE_HELPER"
	helperPathEnv = "MX_CLAW_STORE_HELPER_DB"
)

// TestHelperProcess is not a test: TestCrossProcessLease runs the test
// binary again with helperEnv set, and this function then holds a lease in
// that child process until its stdin closes or it is killed.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv(helperPathEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	owner := NewOwner()
	if _, err := s.AcquireLease(ctx, "shared", owner, time.Hour); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(owner)
	// Block until the parent goes away; a guard ends orphans.
	done := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	os.Exit(0)
}

func TestCrossProcessLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mx-claw.db")
	s := openAt(t, path)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperPathEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's owner: %v (stderr: %s)", err, stderr.String())
	}
	childOwner := strings.TrimSpace(line)
	if !strings.Contains(childOwner, fmt.Sprintf(":%d:", cmd.Process.Pid)) {
		t.Fatalf("child owner %q does not carry its pid %d", childOwner, cmd.Process.Pid)
	}

	me := NewOwner()
	_, err = s.AcquireLease(ctx, "shared", me, time.Minute)
	var held *LeaseHeldError
	if !errors.As(err, &held) || held.Owner != childOwner {
		t.Fatalf("AcquireLease while the child runs = %v, want *LeaseHeldError naming %s", err, childOwner)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup in the child
		t.Fatal(err)
	}
	_ = cmd.Wait() // reap it, else it lingers as a zombie that counts as alive
	killed = true

	l, err := s.AcquireLease(ctx, "shared", me, time.Minute)
	if err != nil || l.Owner != me {
		t.Fatalf("AcquireLease after the child died = %+v, %v; want takeover at once", l, err)
	}
}
