package protocol

// The enum-like strings of the wire format. Each has a type of its own, so
// a value of one cannot be passed as another and every value in use is a
// named constant; the JSON is the plain string.

// ApprovalScope is how far a person's "allow" reaches.
type ApprovalScope string

// The scopes of an approval.
const (
	// ScopeOnce allows this call only (the default).
	ScopeOnce ApprovalScope = "once"
	// ScopeSession also stores a grant for the rest of the session.
	ScopeSession ApprovalScope = "session"
	// ScopeAlways also stores a grant for the project, for good.
	ScopeAlways ApprovalScope = "always"
)

// ApprovalDecision is a person's answer to an approval request.
type ApprovalDecision string

// The answers to an approval request.
const (
	DecisionAllow ApprovalDecision = "allow"
	DecisionDeny  ApprovalDecision = "deny"
)

// ApprovalStatus is where a stored approval stands.
type ApprovalStatus string

// The statuses of an approval.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalApproved ApprovalStatus = "approved"
	ApprovalRejected ApprovalStatus = "rejected"
	// ApprovalCancelled ends an approval whose turn ended without an
	// answer (the turn failed or was cancelled).
	ApprovalCancelled ApprovalStatus = "cancelled"
)

// AuditDecision is the action a permission decision took.
type AuditDecision string

// The decisions the audit log records.
const (
	AuditAllow AuditDecision = "allow"
	AuditAsk   AuditDecision = "ask"
	AuditDeny  AuditDecision = "deny"
)

// AuditSource says what made a recorded decision: the words of the
// permission policy's source ("deny rule run_command(curl:*) from
// /home/u/.mx-claw/settings.json", "mode default", "hard check:
// catastrophic command", "read-only command", "parse failure"), a hook, or
// the user (with the scope of an allow: "user (once)").
type AuditSource string

// The sources of decisions made outside the policy.
const (
	AuditSourceHook AuditSource = "hook"
	AuditSourceUser AuditSource = "user"
)

// TodoStatus is where an item of the model's task list stands.
type TodoStatus string

// The statuses of a todo item (todo_write's enum).
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)
