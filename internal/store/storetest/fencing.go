package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// fencedWrites are the write methods a fenced context guards, each making
// one write to session "s".
var fencedWrites = []struct {
	name  string
	write func(ctx context.Context, s store.Store) error
}{
	{"AppendEvent", func(ctx context.Context, s store.Store) error {
		return s.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"})
	}},
	{"AppendMessage", func(ctx context.Context, s store.Store) error {
		_, err := s.AppendMessage(ctx, "s", &protocol.Message{Role: protocol.RoleUser, Content: "x"})
		return err
	}},
	{"UpdateSession", func(ctx context.Context, s store.Store) error {
		return s.UpdateSession(ctx, &protocol.Session{ID: "s", Title: "changed", Status: protocol.StatusRunning})
	}},
	{"CreateApproval", func(ctx context.Context, s store.Store) error {
		return s.CreateApproval(ctx, &protocol.Approval{ID: fmt.Sprintf("a%d", time.Now().UnixNano()), SessionID: "s"})
	}},
	{"ClearPendingApprovals", func(ctx context.Context, s store.Store) error { return s.ClearPendingApprovals(ctx, "s") }},
	{"EnqueueInput", func(ctx context.Context, s store.Store) error {
		_, err := s.EnqueueInput(ctx, "s", "later")
		return err
	}},
	{"TakeInputs", func(ctx context.Context, s store.Store) error {
		_, err := s.TakeInputs(ctx, "s")
		return err
	}},
	{"AddGrant", func(ctx context.Context, s store.Store) error { return s.AddGrant(ctx, "session:s", "read_file") }},
	{"RecordAudit", func(ctx context.Context, s store.Store) error {
		return s.RecordAudit(ctx, &protocol.AuditEntry{SessionID: "s", Tool: "read_file", Decision: "allow"})
	}},
	{"RecordFile", func(ctx context.Context, s store.Store) error {
		return s.RecordFile(ctx, "s", protocol.FileVersion{Path: "/f", SHA256: "00"})
	}},
}

// testFencing: a write made under a lease (store.WithLease) is stored only
// while its owner holds the lease, unexpired; a write under a lease that
// expired, was taken over or was released fails with ErrLeaseLost and
// stores nothing.
func testFencing(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})
	NewSession(t, s, "s")
	const ttl = 30 * time.Second
	me, other := store.NewOwner(), store.NewOwner()
	mine := store.WithLease(ctx, "s", me)

	// countAll is a fingerprint of everything the writes may change.
	countAll := func() string {
		t.Helper()
		evs, _ := s.Events(ctx, "s", 0, 0)
		msgs, _ := s.Messages(ctx, "s", 0)
		sess, _ := s.GetSession(ctx, "s")
		pend, _ := s.PendingApprovals(ctx, "s")
		grants, _ := s.Grants(ctx, "session:s")
		audit, _ := s.Audit(ctx, "s", 0)
		files, _ := s.Files(ctx, "s")
		return fmt.Sprintf("events %d messages %d title %q pending %d grants %d audit %d files %d inputs %s",
			len(evs), len(msgs), sess.Title, len(pend), len(grants), len(audit), len(files),
			b.QueryString(t, s, `SELECT COUNT(*) FROM queued_inputs`))
	}
	refused := func(when string) {
		t.Helper()
		before := countAll()
		for _, w := range fencedWrites {
			if err := w.write(mine, s); !errors.Is(err, store.ErrLeaseLost) {
				t.Errorf("%s: %s = %v, want ErrLeaseLost", when, w.name, err)
			}
		}
		if after := countAll(); after != before {
			t.Errorf("%s: refused writes changed the store:\n%s\n%s", when, before, after)
		}
	}
	allowed := func(ctx context.Context, when string) {
		t.Helper()
		for _, w := range fencedWrites {
			if err := w.write(ctx, s); err != nil {
				t.Errorf("%s: %s = %v", when, w.name, err)
			}
		}
	}

	refused("before any lease")
	allowed(ctx, "without a fence")
	if _, err := s.AcquireLease(ctx, "s", me, ttl); err != nil {
		t.Fatal(err)
	}
	allowed(mine, "holding the lease")
	// A fence of another session's lease guards nothing of this one.
	if err := s.AppendEvent(store.WithLease(ctx, "elsewhere", me), &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a write fenced by a lease not held = %v, want ErrLeaseLost", err)
	}

	clock.Add(ttl)
	refused("the lease expired")
	if _, err := s.RenewLease(ctx, "s", me, ttl); err != nil {
		t.Fatal(err)
	}
	allowed(mine, "renewed")

	clock.Add(ttl + time.Second)
	if _, err := s.AcquireLease(ctx, "s", other, ttl); err != nil {
		t.Fatal(err)
	}
	refused("taken over")
	allowed(store.WithLease(ctx, "s", other), "the new holder")

	if err := s.ReleaseLease(ctx, "s", other); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(store.WithLease(ctx, "s", other), &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a write after release = %v, want ErrLeaseLost", err)
	}
}

// testFencingRace: while one owner writes under its lease in a loop,
// another process takes the lease over (its holder judged gone); from then
// on every write of the first is refused, so its events all come before
// the new holder's: no interleaving.
func testFencingRace(t *testing.T, b Backend) {
	ctx := context.Background()
	const ghostPID = 4242
	first := b.Open(t, Options{})
	second := b.Another(t, first, Options{ProcessAlive: func(pid int) bool { return pid != ghostPID }})
	NewSession(t, first, "s")
	ghost := fmt.Sprintf("%s:%d:0000beef", store.Hostname(), ghostPID)
	if _, err := first.AcquireLease(ctx, "s", ghost, time.Hour); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var stopErr error
	var ghostWrites int
	started := make(chan struct{})
	wg.Go(func() {
		fenced := store.WithLease(ctx, "s", ghost)
		for i := 0; ; i++ {
			if i == 5 {
				close(started)
			}
			err := first.AppendEvent(fenced, &protocol.Event{Type: protocol.EventUsage, SessionID: "s", TurnID: "ghost"})
			if err != nil {
				stopErr = err
				if i < 5 {
					close(started)
				}
				return
			}
			ghostWrites++
		}
	})
	<-started
	me := store.NewOwner()
	if _, err := second.AcquireLease(ctx, "s", me, time.Hour); err != nil {
		t.Fatalf("takeover: %v", err)
	}
	fenced := store.WithLease(ctx, "s", me)
	for range 5 {
		if err := second.AppendEvent(fenced, &protocol.Event{Type: protocol.EventUsage, SessionID: "s", TurnID: "new"}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if !errors.Is(stopErr, store.ErrLeaseLost) {
		t.Fatalf("the old holder stopped with %v, want ErrLeaseLost", stopErr)
	}
	evs, err := second.Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seenNew := false
	ghosts := 0
	for i, e := range evs {
		if e.Sequence != int64(i+1) {
			t.Fatalf("event %d has sequence %d", i, e.Sequence)
		}
		switch e.TurnID {
		case "new":
			seenNew = true
		case "ghost":
			ghosts++
			if seenNew {
				t.Fatalf("event %d of the old holder after the new holder's", e.Sequence)
			}
		}
	}
	if ghosts != ghostWrites || len(evs) != ghostWrites+5 {
		t.Errorf("%d events (%d of the old holder, which stored %d), want %d", len(evs), ghosts, ghostWrites, ghostWrites+5)
	}
}
