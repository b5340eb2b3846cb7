// Package storetest is the conformance suite of store.Store: the tests every
// implementation must pass, run against the SQLite store (package store's
// tests) and the PostgreSQL store (package postgres's tests) alike, so the
// core can rely on the same semantics from both — sequences, transactions,
// leases and their fencing, approvals, queued input, grants, audit, file
// versions, compactions, the quarantine, event notices, subagents' child
// sessions, file changes and rewinds, deletion and session search.
//
// An implementation's test calls Run with a Backend that opens empty
// stores of its kind.
//
// Only tests import storetest.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Options are what a test asks of the store it opens.
type Options struct {
	// Clock, if set, is the store's clock: it stamps records and decides
	// lease expiry.
	Clock func() time.Time
	// ProcessAlive, if set, replaces the store's check that a lease
	// holder of this host still runs.
	ProcessAlive func(pid int) bool
}

// Backend opens stores of one implementation for the suite.
type Backend struct {
	// Open returns a new store with a database of its own, empty, closed
	// when t ends.
	Open func(t testing.TB, o Options) store.Store
	// Another returns a second handle on s's database, as another process
	// would open it, closed when t ends.
	Another func(t testing.TB, s store.Store, o Options) store.Store
	// Exec runs a statement on s's database directly, as a hand edit
	// would. The suite's statements are plain SQL both SQLite and
	// PostgreSQL understand.
	Exec func(t testing.TB, s store.Store, query string)
	// QueryString returns the first column of the one row query returns,
	// as text.
	QueryString func(t testing.TB, s store.Store, query string) string
}

// Run runs the whole suite as parallel subtests of t.
func Run(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, Backend)
	}{
		{"SessionRoundTrip", testSessionRoundTrip},
		{"ListSessions", testListSessions},
		{"MessagesRoundTrip", testMessagesRoundTrip},
		{"EventsRoundTrip", testEventsRoundTrip},
		{"ConcurrentAppends", testConcurrentAppends},
		{"AppendBatch", testAppendBatch},
		{"Compactions", testCompactions},
		{"LeaseLifecycle", testLeaseLifecycle},
		{"LeaseTakeoverOfDeadProcess", testLeaseTakeoverOfDeadProcess},
		{"LeaseInjectedLiveness", testLeaseInjectedLiveness},
		{"LeaseRace", testLeaseRace},
		{"Fencing", testFencing},
		{"FencingRace", testFencingRace},
		{"Approvals", testApprovals},
		{"ResolveApprovalOnce", testResolveApprovalOnce},
		{"QueuedInputs", testQueuedInputs},
		{"TakeInputsExactlyOnce", testTakeInputsExactlyOnce},
		{"QueuedInputsListAndRemove", testQueuedInputsListAndRemove},
		{"QueuedInputsListRemoveEdit", testQueuedInputsListRemoveEdit},
		{"DequeueWithMessage", testDequeueWithMessage},
		{"DequeueRace", testDequeueRace},
		{"GrantsAuditTrust", testGrantsAuditTrust},
		{"FileVersions", testFileVersions},
		{"CorruptRowsAreQuarantined", testCorruptRowsAreQuarantined},
		{"EventNotices", testEventNotices},
		{"FileChangesRoundTrip", testFileChangesRoundTrip},
		{"Rewinds", testRewinds},
		{"DeleteSession", testDeleteSession},
		{"Search", testSearch},
		{"SearchSnippets", testSearchSnippets},
		{"SearchCommonWordGivesNewest", testSearchCommonWordGivesNewest},
		{"SearchCJK", testSearchCJK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.f(t, b)
		})
	}
}

// Clock is a settable clock for Options.Clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at a fixed time, to the millisecond.
func NewClock() *Clock {
	return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// NewSession creates a session with the given id.
func NewSession(t testing.TB, s store.Store, id string) *protocol.Session {
	t.Helper()
	sess := &protocol.Session{ID: id, Title: "t " + id, Workspace: "/w", Model: "p/m"}
	if err := s.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return sess
}
