package bus

import (
	"sync"
	"testing"
	"time"
)

func TestPublishInOrderToEverySubscriber(t *testing.T) {
	t.Parallel()
	b := New[int](100)
	a, c := b.Subscribe(), b.Subscribe()
	for i := range 50 {
		if n := b.Publish(i); n != 2 {
			t.Fatalf("publish %d reached %d subscribers, want 2", i, n)
		}
	}
	for _, s := range []*Subscription[int]{a, c} {
		for want := range 50 {
			if got := <-s.C(); got != want {
				t.Fatalf("got %d, want %d", got, want)
			}
		}
	}
}

func TestSlowSubscriberIsDroppedOthersUnaffected(t *testing.T) {
	t.Parallel()
	b := New[int](4)
	slow, fast := b.Subscribe(), b.Subscribe()
	for i := range 1000 {
		b.Publish(i)
		// The fast subscriber reads each value as it comes.
		if got := <-fast.C(); got != i {
			t.Fatalf("fast subscriber got %d, want %d", got, i)
		}
	}
	if fast.Dropped() {
		t.Fatal("a subscriber that kept up was dropped")
	}
	if !slow.Dropped() {
		t.Fatal("the stalled subscriber was not dropped")
	}
	// It keeps what it had buffered, in order, then its channel closes.
	var kept []int
	for v := range slow.C() {
		kept = append(kept, v)
	}
	if len(kept) != 4 {
		t.Errorf("the dropped subscriber kept %v, want its buffer's 4 values", kept)
	}
	for i, v := range kept {
		if v != i {
			t.Fatalf("the dropped subscriber kept %v, want a prefix of the stream", kept)
		}
	}
	if b.Len() != 1 {
		t.Errorf("%d subscribers left, want 1", b.Len())
	}
}

func TestPublishNeverBlocks(t *testing.T) {
	t.Parallel()
	b := New[int](1)
	for range 100 {
		b.Subscribe() // never read
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10000 {
			b.Publish(i)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on subscribers that never read")
	}
	if b.Len() != 0 {
		t.Errorf("%d stalled subscribers still subscribed", b.Len())
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	b := New[int](8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				b.Publish(i)
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				s := b.Subscribe()
				select {
				case <-s.C():
				default:
				}
				s.Close()
			}
		}()
	}
	wg.Wait()
}

func TestCloseAndUnsubscribe(t *testing.T) {
	t.Parallel()
	b := New[string](0)
	s := b.Subscribe()
	s.Close()
	s.Close()
	if _, ok := <-s.C(); ok {
		t.Fatal("closed subscription still open")
	}
	if s.Dropped() {
		t.Error("a closed subscription reports dropped")
	}
	if n := b.Publish("x"); n != 0 {
		t.Errorf("published to %d subscribers after unsubscribe", n)
	}
	live := b.Subscribe()
	b.Close()
	if _, ok := <-live.C(); ok {
		t.Fatal("broker Close left a subscription open")
	}
	late := b.Subscribe()
	if _, ok := <-late.C(); ok {
		t.Fatal("subscribing to a closed broker gave an open subscription")
	}
}
