package store

import "context"

// A turn writes its session only while it holds the session's lease. The
// heartbeat that renews the lease cannot alone keep a paused process (a
// stopped VM, a long GC pause, SIGSTOP) from writing after its lease
// expired and another process took the session over: when it wakes, its
// next write may come before its next renewal. So the turn's writes carry
// the lease they are made under, and the store checks it in the write's
// own transaction — a fencing check. A write under a lease its owner no
// longer holds (taken over, released, or expired) fails with ErrLeaseLost
// and stores nothing.

type fenceKey struct{}

// Fence names the lease a write is made under.
type Fence struct {
	SessionID string
	Owner     string
}

// WithLease returns a context whose writes are fenced by owner's lease on
// the session: every write method of a Store given that context (or one
// derived from it) first checks, in the transaction that writes, that
// owner holds the session's lease and that it has not expired, and fails
// with an error wrapping ErrLeaseLost otherwise. The lease methods
// themselves are not fenced.
func WithLease(ctx context.Context, sessionID, owner string) context.Context {
	return context.WithValue(ctx, fenceKey{}, Fence{SessionID: sessionID, Owner: owner})
}

// FenceOf returns the lease ctx's writes are fenced by, if any.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok
}
