package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/store"
)

func testLeaseLifecycle(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})
	const ttl = 30 * time.Second
	me, other := store.NewOwner(), store.NewOwner() // both of this live process

	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
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
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Owner != me || held.SessionID != "s" || !held.ExpiresAt.Equal(l.ExpiresAt) {
		t.Fatalf("AcquireLease by other = %v, want *store.LeaseHeldError naming %s", err, me)
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
	if _, err := s.RenewLease(ctx, "s", other, ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RenewLease by non-holder = %v, want store.ErrLeaseLost", err)
	}

	// Expired but not taken over: GetLease sees none, yet the owner may
	// still renew.
	clock.Add(ttl + time.Second)
	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
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
	if _, err := s.RenewLease(ctx, "s", me, ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RenewLease after takeover = %v, want store.ErrLeaseLost", err)
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
	if _, err := s.GetLease(ctx, "s"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetLease after release = %v", err)
	}
	if _, err := s.RenewLease(ctx, "s", other, ttl); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RenewLease after release = %v", err)
	}
	if l, err = s.AcquireLease(ctx, "s", me, 0); err != nil || !l.ExpiresAt.Equal(clock.Now().Add(store.DefaultLeaseTTL)) {
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

func testLeaseTakeoverOfDeadProcess(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	dead := deadPID(t)
	if store.ProcessAlive(dead) {
		t.Skipf("pid %d already reused", dead)
	}
	if !store.ProcessAlive(os.Getpid()) || !store.ProcessAlive(1) {
		t.Error("processAlive says a live process is dead")
	}
	me := store.NewOwner()
	for _, tc := range []struct {
		holder   string
		takeover bool
	}{
		{fmt.Sprintf("%s:%d:deadbeef", store.Hostname(), dead), true},
		{fmt.Sprintf("%s:%d:deadbeef", store.Hostname(), os.Getpid()), false},
		{fmt.Sprintf("other-host.example:%d:deadbeef", dead), false},
		{fmt.Sprintf("%s:%d:deadbeef", store.UnknownHost, dead), false},
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
			var held *store.LeaseHeldError
			if !errors.As(err, &held) || held.Owner != tc.holder {
				t.Errorf("AcquireLease = %+v, %v; want *store.LeaseHeldError naming %s", l, err, tc.holder)
			}
		})
	}
}

func testLeaseInjectedLiveness(t *testing.T, b Backend) {
	ctx := context.Background()
	dead := map[int]bool{4242: true}
	s := b.Open(t, Options{ProcessAlive: func(pid int) bool { return !dead[pid] }})
	holder := fmt.Sprintf("%s:4242:00000000", store.Hostname())
	if _, err := s.AcquireLease(ctx, "s", holder, time.Hour); err != nil {
		t.Fatal(err)
	}
	if l, err := s.AcquireLease(ctx, "s", store.NewOwner(), time.Hour); err != nil || l.Owner == holder {
		t.Errorf("AcquireLease = %+v, %v; want takeover", l, err)
	}
}

// testLeaseRace: owners on two handles race for one lease; exactly one
// gets it.
func testLeaseRace(t *testing.T, b Backend) {
	ctx := context.Background()
	first := b.Open(t, Options{})
	handles := []store.Store{first, b.Another(t, first, Options{})}
	var wg sync.WaitGroup
	won := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			owner := store.NewOwner()
			_, err := handles[i%2].AcquireLease(ctx, "race", owner, time.Hour)
			var held *store.LeaseHeldError
			switch {
			case err == nil:
				won <- owner
			case !errors.As(err, &held):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []string
	for w := range won {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d owners got the lease, want 1", len(winners))
	}
	if l, err := first.GetLease(ctx, "race"); err != nil || l.Owner != winners[0] {
		t.Errorf("GetLease = %+v, %v; want %s", l, err, winners[0])
	}
}
