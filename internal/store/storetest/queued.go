package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/mx-claw/mx-claw/internal/store"
)

// TestQueuedInputsListRemoveEdit lists, edits and removes queued inputs:
// an edit keeps the input's place, a removal takes it out exactly once,
// and an input already taken can be neither edited nor removed.
func testQueuedInputsListRemoveEdit(t *testing.T, be Backend) {
	ctx := context.Background()
	s := be.Open(t, Options{})
	NewSession(t, s, "s")
	a, _ := s.EnqueueInput(ctx, "s", "first")
	b, _ := s.EnqueueInput(ctx, "s", "second")
	c, _ := s.EnqueueInput(ctx, "s", "third")

	if _, err := s.EditInput(ctx, "s", a.ID, "first, edited"); err != nil {
		t.Fatal(err)
	}
	got, err := s.RemoveInput(ctx, "s", b.ID)
	if err != nil || got.Content != "second" {
		t.Fatalf("RemoveInput = %+v, %v", got, err)
	}
	if _, err := s.RemoveInput(ctx, "s", b.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second RemoveInput = %v, want ErrNotFound", err)
	}
	if _, err := s.RemoveInput(ctx, "other", c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RemoveInput of another session's input = %v, want ErrNotFound", err)
	}
	list, err := s.QueuedInputs(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Content != "first, edited" || list[1].Content != "third" {
		t.Fatalf("QueuedInputs = %+v", list)
	}
	if _, err := s.TakeInputs(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EditInput(ctx, "s", c.ID, "too late"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("EditInput of a taken input = %v, want ErrNotFound", err)
	}
	if list, _ := s.QueuedInputs(ctx, "s"); len(list) != 0 {
		t.Errorf("QueuedInputs after TakeInputs = %+v", list)
	}
}
