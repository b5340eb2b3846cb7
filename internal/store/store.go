// Package store keeps everything mx-claw must not lose: sessions, their
// append-only transcripts, their events, the leases that make one process at
// a time the writer of a session, pending approvals and queued input.
//
// Store is the interface the core uses; it carries no SQL. Open returns the
// SQLite implementation: one database file, WAL mode, a cgo-free driver and
// versioned migrations. Package postgres is the other one, sharing sessions
// between machines with the same semantics; both pass the conformance suite
// of package storetest. A turn's writes are fenced by its lease (fence.go),
// and stores tell of stored events (notify.go).
//
// Session search is FTS5 (history.go); Chinese, Japanese and Korean words
// are found inside longer runs of those scripts by indexing each CJK
// character as a word and each pair of neighbouring characters, not by
// trigrams (cjk.go says why, with the benchmark's figures).
//
// A record that cannot be decoded is moved to a quarantine table with a
// warning event instead of failing every read of its session (quarantine.go).
//
// Any package may import store except the front ends (tui, repl, headless),
// which see sessions only through the core.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// DefaultLeaseTTL is how long a lease lasts unless renewed.
const DefaultLeaseTTL = 30 * time.Second

// ErrNotFound is returned when a session, approval or other record does not
// exist.
var ErrNotFound = errors.New("not found")

// ErrQueueChanged is returned by AppendBatch when an input the batch sends
// (Batch.Dequeue) is no longer queued as it was read: the user removed or
// edited it, or another turn sent it. Nothing of the batch is stored; the
// caller reads the queue again.
var ErrQueueChanged = errors.New("queued input changed since it was read")

// ErrLeaseLost is returned by RenewLease when the caller no longer holds the
// lease (it expired and was taken over, or was released).
var ErrLeaseLost = errors.New("lease lost")

// LeaseHeldError is returned by AcquireLease when another live owner holds
// the session's lease.
type LeaseHeldError struct {
	SessionID string
	Owner     string
	ExpiresAt time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("session %s is busy: another process (%s) is running a turn on it until %s",
		e.SessionID, e.Owner, e.ExpiresAt.Format(time.RFC3339))
}

// ListOptions filters ListSessions.
type ListOptions struct {
	// Workspace, if set, keeps only sessions of that workspace.
	Workspace string
	// Limit caps the result; 0 means no cap.
	Limit int
	// Status, if set, keeps only sessions with that status.
	Status protocol.SessionStatus
	// Parent, if set, keeps only the children of that session (the
	// subagents its task calls started).
	Parent string
	// WithChildren lists child sessions too; without it (and without
	// Parent) only the user's own sessions are listed, so a subagent's
	// session never shows up as the latest one to continue.
	WithChildren bool
}

// Batch is what AppendBatch stores in one transaction.
type Batch struct {
	// NewSession, if set, is created first (as CreateSession would).
	NewSession *protocol.Session
	// UpdateSession, if set, is updated next (as UpdateSession would).
	UpdateSession *protocol.Session
	Messages      []*protocol.Message
	Events        []*protocol.Event
	Audit         []*protocol.AuditEntry
	Files         []protocol.FileVersion
	// Compaction, if set, is a compaction record of the session.
	Compaction *protocol.Compaction
	// Changes, Reverted, Rewind and Source are the records of time
	// travel and imports (see History); Changes point at results among
	// Messages, Reverted are change record ids.
	Changes  []CallChanges
	Reverted []int64
	Rewind   *protocol.Rewind
	Source   *SessionSource
	// Dequeue are queued inputs this batch sends (as the next turn's user
	// message) or gives back (input.returned): they leave the queue in the
	// same transaction, so an acknowledged message is always either queued
	// or stored. Each must still be queued with the same content, or the
	// batch fails with ErrQueueChanged and stores nothing.
	Dequeue []protocol.QueuedInput
}

// Store is the persistence the core needs. All methods are safe for
// concurrent use. Records are returned newest-last unless said otherwise.
type Store interface {
	History

	// CreateSession stores a new session. s.ID must be set; CreatedAt and
	// UpdatedAt are set by the store if zero.
	CreateSession(ctx context.Context, s *protocol.Session) error
	// GetSession returns a session or an error wrapping ErrNotFound.
	GetSession(ctx context.Context, id string) (*protocol.Session, error)
	// ListSessions returns sessions, most recently updated first.
	ListSessions(ctx context.Context, opts ListOptions) ([]protocol.Session, error)
	// UpdateSession stores the mutable fields of s (title, model, status,
	// last error, usage) and bumps UpdatedAt.
	UpdateSession(ctx context.Context, s *protocol.Session) error

	// AppendMessage appends m to the session's transcript, assigns m.Seq
	// (1, 2, ... per session) and returns it.
	AppendMessage(ctx context.Context, sessionID string, m *protocol.Message) (int64, error)
	// AppendBatch stores a batch in one transaction: messages, then
	// events (assigning Seq and Sequence as AppendMessage and AppendEvent
	// do; events may point at messages of the batch and are stored with
	// their Seq), audit entries and file versions. All or nothing is
	// stored. A turn stores each step's records this way, so a step costs
	// few commits.
	AppendBatch(ctx context.Context, sessionID string, b Batch) error
	// Messages returns the session's messages with Seq > afterSeq, in order.
	Messages(ctx context.Context, sessionID string, afterSeq int64) ([]protocol.Message, error)

	// AppendEvent stores e, assigning e.Sequence: strictly increasing per
	// session, starting at 1.
	AppendEvent(ctx context.Context, e *protocol.Event) error
	// Events returns the session's events with Sequence > afterSeq, in
	// order; limit 0 means all.
	Events(ctx context.Context, sessionID string, afterSeq int64, limit int) ([]protocol.Event, error)

	// AcquireLease makes owner the writer of the session for ttl. It fails
	// with *LeaseHeldError if another owner holds an unexpired lease whose
	// process is still alive. A lease of a process on this host that is
	// gone is taken over at once. Acquiring a lease one already holds
	// extends it.
	AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error)
	// RenewLease extends owner's lease by ttl, or fails with ErrLeaseLost.
	RenewLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error)
	// ReleaseLease gives up owner's lease; releasing a lease one does not
	// hold is not an error.
	ReleaseLease(ctx context.Context, sessionID, owner string) error
	// GetLease returns the session's current lease, or ErrNotFound.
	GetLease(ctx context.Context, sessionID string) (protocol.Lease, error)

	// CreateApproval stores a pending approval; a.ID must be set.
	CreateApproval(ctx context.Context, a *protocol.Approval) error
	// PendingApprovals returns the session's pending approvals, oldest
	// first.
	PendingApprovals(ctx context.Context, sessionID string) ([]protocol.Approval, error)
	// GetApproval returns an approval whatever its status, or an error
	// wrapping ErrNotFound.
	GetApproval(ctx context.Context, sessionID, id string) (protocol.Approval, error)
	// ResolveApproval stores the answer to a pending approval: approved
	// or rejected, with its feedback, scope, rule and who gave it. It
	// fails with ErrNotFound if no such approval is pending: of several
	// answers, in any processes, the first wins.
	ResolveApproval(ctx context.Context, sessionID, id string, r Resolution) error
	// ClearPendingApprovals marks all the session's pending approvals
	// "cancelled".
	ClearPendingApprovals(ctx context.Context, sessionID string) error

	// EnqueueInput stores a user message to send when the session is free.
	EnqueueInput(ctx context.Context, sessionID, content string) (protocol.QueuedInput, error)
	// TakeInputs removes and returns the session's queued inputs, oldest
	// first.
	TakeInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error)
	// QueuedInputs returns the session's queued inputs, oldest first,
	// leaving them queued.
	QueuedInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error)
	// QueuedSessions returns the ids of the sessions that have queued
	// inputs, in no particular order (a server looks there for messages
	// a process that died left unsent).
	QueuedSessions(ctx context.Context) ([]string, error)
	// RemoveInput removes one queued input and returns it; ErrNotFound if
	// it is no longer queued (sent, or removed by someone else).
	RemoveInput(ctx context.Context, sessionID string, id int64) (protocol.QueuedInput, error)
	// EditInput replaces the content of one queued input, keeping its place
	// in the queue; ErrNotFound if it is no longer queued.
	EditInput(ctx context.Context, sessionID string, id int64, content string) (protocol.QueuedInput, error)

	// AddGrant stores a rule that allows calls without asking in a scope
	// ("session:<id>" or a workspace path); an existing grant is kept.
	AddGrant(ctx context.Context, scope, rule string) error
	// Grants returns the grants of the given scopes, oldest first.
	Grants(ctx context.Context, scopes ...string) ([]protocol.Grant, error)
	// RecordAudit stores one permission decision.
	RecordAudit(ctx context.Context, e *protocol.AuditEntry) error
	// Audit returns recorded decisions of a session (all sessions if
	// sessionID is empty), oldest first; limit 0 means all.
	Audit(ctx context.Context, sessionID string, limit int) ([]protocol.AuditEntry, error)
	// SetTrusted records that the user trusts the workspace at path, so
	// its own settings and hooks apply, as the folder identity names.
	SetTrusted(ctx context.Context, path, identity string) error
	// Trusted reports whether the workspace at path was trusted, and the
	// identity of the folder that was trusted then.
	Trusted(ctx context.Context, path string) (identity string, ok bool, err error)

	// RecordFile stores the version of a file the session last read or
	// wrote (its read-before-write guard), replacing the previous one.
	RecordFile(ctx context.Context, sessionID string, v protocol.FileVersion) error
	// Files returns the file versions the session knows.
	Files(ctx context.Context, sessionID string) ([]protocol.FileVersion, error)

	// Compactions returns the session's compaction records, oldest first.
	Compactions(ctx context.Context, sessionID string) ([]protocol.Compaction, error)

	// Quarantined returns the records of a session ("" for every
	// session) that could not be decoded and were set aside, oldest
	// first: with all false, only those not resolved yet (see
	// quarantine.go).
	Quarantined(ctx context.Context, sessionID string, all bool) ([]QuarantinedRow, error)

	// Close closes the store.
	Close() error
}
