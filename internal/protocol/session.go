package protocol

import "time"

// SessionStatus is where a session stands. It is stored and shown by every
// front end.
type SessionStatus string

// The statuses a session may have.
const (
	StatusIdle               SessionStatus = "idle"
	StatusRunning            SessionStatus = "running"
	StatusWaitingForApproval SessionStatus = "waiting_for_approval"
	StatusFailed             SessionStatus = "failed"
	StatusCancelled          SessionStatus = "cancelled"
)

// Session is the stored record of one conversation in a workspace.
type Session struct {
	ID        string        `json:"id"`
	Title     string        `json:"title"`
	Workspace string        `json:"workspace"`
	Model     string        `json:"model"`
	Status    SessionStatus `json:"status"`
	ParentID  string        `json:"parentId,omitempty"`
	// Agent is the subagent type of a child session ("explore",
	// "general", a user-defined one); empty for a user's session.
	Agent     string    `json:"agent,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// LastError is the error of the last failed turn, if the session is
	// failed.
	LastError string `json:"lastError,omitempty"`
	// Usage is the sum of the token usage of all the session's requests.
	Usage Usage `json:"usage"`
	// MessageCount is the number of stored messages.
	MessageCount int64 `json:"messageCount"`
	// CostUSD is the session's estimated cost so far; 0 while unknown.
	CostUSD float64 `json:"costUsd,omitempty"`
	// ContextPercent is how much of the model's context window the
	// session's latest request used.
	ContextPercent float64 `json:"contextPercent,omitempty"`
}

// Lease is the right of one owner to advance a session, until it expires.
type Lease struct {
	SessionID string    `json:"sessionId"`
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// QueuedInput is a user message that arrived while its session was busy.
type QueuedInput struct {
	ID        int64     `json:"id"`
	SessionID string    `json:"sessionId"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
}

// Approval is a tool call waiting for a person's decision, with the rest of
// the calls of the same model response that come after it.
type Approval struct {
	ID        string     `json:"id"`
	SessionID string     `json:"sessionId"`
	TurnID    string     `json:"turnId"`
	Call      ToolCall   `json:"call"`
	Summary   string     `json:"summary"`
	Remaining []ToolCall `json:"remaining,omitempty"`
	// Status is pending, approved, rejected or cancelled.
	Status   ApprovalStatus `json:"status"`
	Feedback string         `json:"feedback,omitempty"`
	// Scope and Rule are those of the answer: "once", "session" or
	// "always", and the rule the person chose to save instead of the
	// suggested one.
	Scope ApprovalScope `json:"scope,omitempty"`
	Rule  string        `json:"rule,omitempty"`
	// AnsweredBy names who answered when it was not the process that
	// asked: "the web panel", "mx-claw approve", "another process".
	AnsweredBy string `json:"answeredBy,omitempty"`
	// Waiter is the lease owner whose turn waits for the answer in its
	// process (the REPL, a server); empty when the turn paused and ended.
	Waiter     string    `json:"waiter,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
}

// Grant is a stored permission rule that allows calls without asking:
// given "for this session" (Scope is "session:<id>") or "always" for a
// project (Scope is the workspace path).
type Grant struct {
	Scope     string    `json:"scope"`
	Rule      string    `json:"rule"`
	CreatedAt time.Time `json:"createdAt"`
}

// AuditEntry records one permission decision: what was decided about which
// call, and what decided it (a rule, the mode, the user, a hook, a hard
// check).
type AuditEntry struct {
	ID        int64         `json:"id"`
	SessionID string        `json:"sessionId"`
	Tool      string        `json:"tool"`
	Summary   string        `json:"summary"`
	Decision  AuditDecision `json:"decision"`
	Source    AuditSource   `json:"source"`
	CreatedAt time.Time     `json:"createdAt"`
}

// FileVersion is the version of a file a session last read or wrote, as
// the read-before-write guard remembers it: it survives the process, so a
// session continued elsewhere need not read its files again.
type FileVersion struct {
	Path    string    `json:"path"`
	ModTime time.Time `json:"modTime"`
	Size    int64     `json:"size"`
	// SHA256 is the hex SHA-256 of the contents.
	SHA256 string `json:"sha256"`
}

// Todo is one item of the task list the model keeps with todo_write.
type Todo struct {
	ID      string     `json:"id,omitempty"`
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
}

// Compaction records that the model's view of a session replaces its
// messages up to UpToSeq by a summary and a ledger; the stored messages
// stay. The latest one shapes every later request.
type Compaction struct {
	ID           string    `json:"id"`
	UpToSeq      int64     `json:"upToSeq"`
	Summary      string    `json:"summary"`
	Ledger       string    `json:"ledger"`
	Trigger      string    `json:"trigger"`
	Instructions string    `json:"instructions,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}
