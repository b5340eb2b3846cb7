package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/mx-claw/mx-claw/internal/store"
)

func testQueuedInputsListAndRemove(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s")
	NewSession(t, s, "other")
	a, _ := s.EnqueueInput(ctx, "s", "first")
	second, _ := s.EnqueueInput(ctx, "s", "second")
	c, _ := s.EnqueueInput(ctx, "s", "third")
	if _, err := s.EnqueueInput(ctx, "other", "x"); err != nil {
		t.Fatal(err)
	}
	got, err := s.QueuedInputs(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != a.ID || got[1].Content != "second" || got[2].ID != c.ID {
		t.Fatalf("QueuedInputs = %+v", got)
	}
	if _, err := s.RemoveInput(ctx, "s", second.ID); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		session string
		id      int64
	}{{"s", second.ID}, {"other", a.ID}, {"s", 9999}} {
		if _, err := s.RemoveInput(ctx, bad.session, bad.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("RemoveInput(%s, %d) = %v, want ErrNotFound", bad.session, bad.id, err)
		}
	}
	taken, err := s.TakeInputs(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{a.ID, c.ID}; len(taken) != 2 || !reflect.DeepEqual([]int64{taken[0].ID, taken[1].ID}, want) {
		t.Errorf("taken after removal %+v, want ids %v", taken, want)
	}
	if got, err := s.QueuedInputs(ctx, "s"); err != nil || len(got) != 0 || got == nil {
		t.Errorf("QueuedInputs after take = %#v, %v; want empty", got, err)
	}
}
