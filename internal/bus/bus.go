package bus

import (
	"sync"
	"sync/atomic"
)

// DefaultBuffer is the per-subscriber buffer used when New is given none.
const DefaultBuffer = 256

// Broker fans values of type T out to subscribers. It is safe for
// concurrent use; the zero Broker is not usable, call New.
type Broker[T any] struct {
	buffer int

	mu     sync.Mutex
	subs   map[*Subscription[T]]struct{}
	closed bool
}

// New returns a broker whose subscribers buffer up to buffer values each
// (DefaultBuffer if buffer <= 0).
func New[T any](buffer int) *Broker[T] {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	return &Broker[T]{buffer: buffer, subs: make(map[*Subscription[T]]struct{})}
}

// Subscription is one subscriber's view of a broker: the values published
// after Subscribe returned, in order, until it is closed or dropped.
type Subscription[T any] struct {
	b       *Broker[T]
	ch      chan T
	dropped atomic.Bool
	once    sync.Once
}

// Subscribe adds a subscriber. On a closed broker the subscription's
// channel is already closed.
func (b *Broker[T]) Subscribe() *Subscription[T] {
	s := &Subscription[T]{b: b, ch: make(chan T, b.buffer)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.once.Do(func() { close(s.ch) })
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Publish hands v to every subscriber without blocking; a subscriber whose
// buffer is full is dropped (see the package doc). It returns the number
// of subscribers that received v.
func (b *Broker[T]) Publish(v T) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.subs {
		select {
		case s.ch <- v:
			n++
		default:
			s.dropped.Store(true)
			delete(b.subs, s)
			s.once.Do(func() { close(s.ch) })
		}
	}
	return n
}

// Len returns the number of live subscribers.
func (b *Broker[T]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Close closes every subscription; later Subscribe calls get a closed
// one and Publish delivers nothing.
func (b *Broker[T]) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		s.once.Do(func() { close(s.ch) })
	}
}

// C returns the channel the subscription's values arrive on. It is closed
// when the subscription is closed, dropped, or its broker closed.
func (s *Subscription[T]) C() <-chan T { return s.ch }

// Dropped reports whether the broker dropped the subscription because its
// buffer was full: the values after the last one received were lost.
func (s *Subscription[T]) Dropped() bool { return s.dropped.Load() }

// Close unsubscribes. It may be called more than once and from any
// goroutine.
func (s *Subscription[T]) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	delete(s.b.subs, s)
	s.once.Do(func() { close(s.ch) })
}
