package store

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestApprovals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newTestClock()
	s := openTest(t, WithClock(clock.Now))
	newSession(t, s, "s")
	newSession(t, s, "other")

	a1 := &protocol.Approval{ID: "a1", SessionID: "s", TurnID: "t1", Summary: "rm -rf build",
		Call: protocol.ToolCall{ID: "c1", Name: "shell", Arguments: `{"cmd":"rm -rf build"}`},
		Remaining: []protocol.ToolCall{
			{ID: "c2", Name: "read", Arguments: `{}`},
			{ID: "c3", Name: "edit", Arguments: `not json`},
		},
	}
	clock.Add(time.Second)
	if err := s.CreateApproval(ctx, a1); err != nil {
		t.Fatal(err)
	}
	if a1.Status != protocol.ApprovalPending || !a1.CreatedAt.Equal(clock.Now()) {
		t.Errorf("CreateApproval left %+v", a1)
	}
	a2 := &protocol.Approval{ID: "a2", SessionID: "s", Call: protocol.ToolCall{ID: "c9", Name: "shell"}, Waiter: "owner-1"}
	clock.Add(time.Second)
	if err := s.CreateApproval(ctx, a2); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a3", SessionID: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a1", SessionID: "s"}); err == nil {
		t.Error("CreateApproval of an existing id succeeded")
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a4", SessionID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateApproval for a missing session = %v", err)
	}

	got, err := s.PendingApprovals(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if want := []protocol.Approval{*a1, *a2}; !reflect.DeepEqual(got, want) {
		t.Errorf("PendingApprovals = %+v\nwant                %+v", got, want)
	}

	if err := s.ResolveApproval(ctx, "s", "a1", Resolution{Status: "maybe"}); err == nil {
		t.Error("ResolveApproval with a bad status succeeded")
	}
	if err := s.ResolveApproval(ctx, "other", "a1", Resolution{Status: protocol.ApprovalApproved}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResolveApproval in the wrong session = %v", err)
	}
	if err := s.ResolveApproval(ctx, "s", "a1", Resolution{Status: protocol.ApprovalRejected, Feedback: "not that"}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResolveApproval(ctx, "s", "a1", Resolution{Status: protocol.ApprovalApproved}); !errors.Is(err, ErrNotFound) {
		t.Errorf("second ResolveApproval = %v, want ErrNotFound", err)
	}
	var status protocol.ApprovalStatus
	var feedback string
	var resolved int64
	if err := s.r.QueryRow(`SELECT status, feedback, resolved_at FROM approvals WHERE id = 'a1'`).
		Scan(&status, &feedback, &resolved); err != nil || status != protocol.ApprovalRejected || feedback != "not that" || resolved != ms(clock.Now()) {
		t.Errorf("a1 stored as %q %q %d, %v", status, feedback, resolved, err)
	}
	// The whole answer is kept, for a turn waiting in another process.
	if err := s.ResolveApproval(ctx, "s", "a2", Resolution{Status: protocol.ApprovalApproved, Scope: "session",
		Rule: "run_command(go test:*)", By: "the web panel"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.GetApproval(ctx, "s", "a2")
	if err != nil || a.Status != protocol.ApprovalApproved || a.Scope != "session" || a.Rule != "run_command(go test:*)" ||
		a.AnsweredBy != "the web panel" || a.Waiter != "owner-1" || a.ResolvedAt.IsZero() {
		t.Errorf("GetApproval after the answer = %+v, %v", a, err)
	}
	if _, err := s.GetApproval(ctx, "other", "a2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetApproval in the wrong session = %v", err)
	}

	got, _ = s.PendingApprovals(ctx, "s")
	if len(got) != 0 {
		t.Errorf("PendingApprovals after resolve = %+v", got)
	}
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a5", SessionID: "s", Call: protocol.ToolCall{ID: "c5", Name: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearPendingApprovals(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.PendingApprovals(ctx, "s"); len(got) != 0 {
		t.Errorf("PendingApprovals after clear = %+v", got)
	}
	if err := s.ResolveApproval(ctx, "s", "a5", Resolution{Status: protocol.ApprovalApproved}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ResolveApproval of a cancelled approval = %v", err)
	}
	if a, _ := s.GetApproval(ctx, "s", "a5"); a.Status != protocol.ApprovalCancelled {
		t.Errorf("a cancelled approval reads %+v", a)
	}
	if got, _ = s.PendingApprovals(ctx, "other"); len(got) != 1 {
		t.Errorf("ClearPendingApprovals touched another session: %+v", got)
	}
}

func TestResolveApprovalOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s")
	if err := s.CreateApproval(ctx, &protocol.Approval{ID: "a", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for range 8 {
		wg.Go(func() { results <- s.ResolveApproval(ctx, "s", "a", Resolution{Status: protocol.ApprovalApproved}) })
	}
	wg.Wait()
	close(results)
	wins := 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, ErrNotFound):
			t.Error(err)
		}
	}
	if wins != 1 {
		t.Errorf("%d resolvers won, want 1", wins)
	}
}

func TestQueuedInputs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newTestClock()
	s := openTest(t, WithClock(clock.Now))
	newSession(t, s, "s")
	newSession(t, s, "other")

	var want []protocol.QueuedInput
	for _, c := range []string{"first", "second", "third"} {
		clock.Add(time.Second)
		q, err := s.EnqueueInput(ctx, "s", c)
		if err != nil {
			t.Fatal(err)
		}
		if q.ID == 0 || q.SessionID != "s" || q.Content != c || !q.CreatedAt.Equal(clock.Now()) {
			t.Errorf("EnqueueInput = %+v", q)
		}
		want = append(want, q)
	}
	if _, err := s.EnqueueInput(ctx, "other", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnqueueInput(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("EnqueueInput for a missing session = %v", err)
	}
	got, err := s.TakeInputs(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TakeInputs = %+v\nwant         %+v", got, want)
	}
	if got, err = s.TakeInputs(ctx, "s"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("second TakeInputs = %#v, %v; want empty", got, err)
	}
	if got, _ = s.TakeInputs(ctx, "other"); len(got) != 1 {
		t.Errorf("TakeInputs(other) = %+v", got)
	}
}

func TestTakeInputsExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	newSession(t, s, "s")
	const n = 50
	var wg sync.WaitGroup
	taken := make(chan protocol.QueuedInput, n)
	wg.Go(func() {
		for range n {
			if _, err := s.EnqueueInput(ctx, "s", "x"); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 20 {
				got, err := s.TakeInputs(ctx, "s")
				if err != nil {
					t.Error(err)
					return
				}
				for _, q := range got {
					taken <- q
				}
			}
		})
	}
	wg.Wait()
	rest, _ := s.TakeInputs(ctx, "s")
	for _, q := range rest {
		taken <- q
	}
	close(taken)
	seen := map[int64]bool{}
	for q := range taken {
		if seen[q.ID] {
			t.Errorf("input %d taken twice", q.ID)
		}
		seen[q.ID] = true
	}
	if len(seen) != n {
		t.Errorf("took %d inputs, want %d", len(seen), n)
	}
}
