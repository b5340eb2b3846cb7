package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestNewOwner(t *testing.T) {
	t.Parallel()
	a, b := NewOwner(), NewOwner()
	if a == b {
		t.Errorf("NewOwner twice = %q", a)
	}
	host, pid, ok := parseOwner(a)
	if !ok || host != hostname() || pid != os.Getpid() {
		t.Errorf("parseOwner(%q) = %q, %d, %v", a, host, pid, ok)
	}
	if suffix := a[strings.LastIndex(a, ":")+1:]; len(suffix) != 8 {
		t.Errorf("random part %q is not 8 hex digits", suffix)
	}
	for _, bad := range []string{"", "x", "host:abc:ff", ":12:ff", "host:-1:ff", "host:0:ff"} {
		if _, _, ok := parseOwner(bad); ok {
			t.Errorf("parseOwner(%q) ok", bad)
		}
	}
	if host, pid, ok := parseOwner("a:b:42:ff"); !ok || host != "a:b" || pid != 42 {
		t.Errorf("parseOwner with colon host = %q, %d, %v", host, pid, ok)
	}
}

func TestLeaseLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newTestClock()
	s := openTest(t, WithClock(clock.Now))
	const ttl = 30 * time.Second
	me, other := NewOwner(), NewOwner() // both of this live process

	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetLease before any = %v", err)
	}
	l, err := s.AcquireLease(ctx, "s", me, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if l.Owner != me || l.SessionID != "s" || !l.ExpiresAt.Equal(clock.Now().Add(ttl)) {
		t.Errorf("AcquireLease = %+v", l)
	}
	if got, err := s.GetLease(ctx, "s"); err != nil || got != l {
		t.Errorf("GetLease = %+v, %v; want %+v", got, err, l)
	}

	// A second owner is refused, with a message naming the holder.
	_, err = s.AcquireLease(ctx, "s", other, ttl)
	var held *LeaseHeldError
	if !errors.As(err, &held) || held.Owner != me || held.SessionID != "s" || !held.ExpiresAt.Equal(l.ExpiresAt) {
		t.Fatalf("AcquireLease by other = %v, want *LeaseHeldError naming %s", err, me)
	}
	if !strings.Contains(err.Error(), me) {
		t.Errorf("error %q does not name %s", err, me)
	}

	// Acquiring again and renewing both extend.
	clock.Add(10 * time.Second)
	if l, err = s.AcquireLease(ctx, "s", me, ttl); err != nil || !l.ExpiresAt.Equal(clock.Now().Add(ttl)) {
		t.Errorf("re-AcquireLease = %+v, %v", l, err)
	}
	clock.Add(10 * time.Second)
	if l, err = s.RenewLease(ctx, "s", me, ttl); err != nil || !l.ExpiresAt.Equal(clock.Now().Add(ttl)) {
		t.Errorf("RenewLease = %+v, %v", l, err)
	}
	if _, err := s.RenewLease(ctx, "s", other, ttl); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("RenewLease by non-holder = %v, want ErrLeaseLost", err)
	}

	// Expired but not taken over: GetLease sees none, yet the owner may
	// still renew.
	clock.Add(ttl + time.Second)
	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetLease of expired = %v", err)
	}
	if _, err := s.RenewLease(ctx, "s", me, ttl); err != nil {
		t.Errorf("RenewLease of expired, untaken lease = %v", err)
	}

	// Expired and taken over: the old owner has lost it.
	clock.Add(ttl)
	if l, err = s.AcquireLease(ctx, "s", other, ttl); err != nil || l.Owner != other {
		t.Fatalf("AcquireLease of expired = %+v, %v", l, err)
	}
	if _, err := s.RenewLease(ctx, "s", me, ttl); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("RenewLease after takeover = %v, want ErrLeaseLost", err)
	}

	// Release by a non-holder does nothing; by the holder frees it.
	if err := s.ReleaseLease(ctx, "s", me); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetLease(ctx, "s"); err != nil || got.Owner != other {
		t.Errorf("after foreign release GetLease = %+v, %v", got, err)
	}
	if err := s.ReleaseLease(ctx, "s", other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetLease after release = %v", err)
	}
	if _, err := s.RenewLease(ctx, "s", other, ttl); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("RenewLease after release = %v", err)
	}
	if l, err = s.AcquireLease(ctx, "s", me, 0); err != nil || !l.ExpiresAt.Equal(clock.Now().Add(DefaultLeaseTTL)) {
		t.Errorf("AcquireLease with ttl 0 = %+v, %v", l, err)
	}
	if _, err := s.AcquireLease(ctx, "s", "", ttl); err == nil {
		t.Error("AcquireLease with empty owner succeeded")
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestLeaseTakeoverOfDeadProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	dead := deadPID(t)
	if processAlive(dead) {
		t.Skipf("pid %d already reused", dead)
	}
	if !processAlive(os.Getpid()) || !processAlive(1) {
		t.Error("processAlive says a live process is dead")
	}
	me := NewOwner()
	for _, tc := range []struct {
		holder   string
		takeover bool
	}{
		{fmt.Sprintf("%s:%d:deadbeef", hostname(), dead), true},
		{fmt.Sprintf("%s:%d:deadbeef", hostname(), os.Getpid()), false},
		{fmt.Sprintf("other-host.example:%d:deadbeef", dead), false},
		{fmt.Sprintf("%s:%d:deadbeef", unknownHost, dead), false},
		{"not an owner", false},
	} {
		t.Run(tc.holder, func(t *testing.T) {
			id := "s-" + tc.holder
			if _, err := s.AcquireLease(ctx, id, tc.holder, time.Hour); err != nil {
				t.Fatal(err)
			}
			l, err := s.AcquireLease(ctx, id, me, time.Minute)
			if tc.takeover {
				if err != nil || l.Owner != me {
					t.Errorf("AcquireLease = %+v, %v; want takeover", l, err)
				}
				return
			}
			var held *LeaseHeldError
			if !errors.As(err, &held) || held.Owner != tc.holder {
				t.Errorf("AcquireLease = %+v, %v; want *LeaseHeldError naming %s", l, err, tc.holder)
			}
		})
	}
}

func TestLeaseInjectedLiveness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dead := map[int]bool{4242: true}
	s := openTest(t, WithProcessAlive(func(pid int) bool { return !dead[pid] }))
	holder := fmt.Sprintf("%s:4242:00000000", hostname())
	if _, err := s.AcquireLease(ctx, "s", holder, time.Hour); err != nil {
		t.Fatal(err)
	}
	if l, err := s.AcquireLease(ctx, "s", NewOwner(), time.Hour); err != nil || l.Owner == holder {
		t.Errorf("AcquireLease = %+v, %v; want takeover", l, err)
	}
}
