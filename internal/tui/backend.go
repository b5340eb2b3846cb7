package tui

import (
	"context"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Backend is what the UI needs from mx-claw. internal/app implements it on
// a wired App; a client of a running server could implement it too.
//
// Run and Compact are called from a goroutine of their own and block for
// the whole turn; Answer, Cancel and Enqueue are called meanwhile from
// other goroutines.
// The sinks are called from one goroutine at a time and must not block for
// long.
type Backend interface {
	// Workspace is the directory the sessions work in.
	Workspace() string
	// NewSession creates an idle session in the workspace on the current
	// model.
	NewSession(ctx context.Context) (protocol.Session, error)
	// ResumeSession returns a stored session and its stored events, for
	// showing its history as it was shown live.
	ResumeSession(ctx context.Context, id string) (protocol.Session, []protocol.Event, error)
	// ListSessions returns the workspace's sessions, most recent first,
	// at most limit of them.
	ListSessions(ctx context.Context, limit int) ([]protocol.Session, error)
	// Run takes one user message through a turn, reporting events to
	// sink, and then sends the messages queued meanwhile. Calls needing
	// approval emit permission.requested and wait for Answer. With an
	// empty input it only sends what is queued, if anything.
	Run(ctx context.Context, sessionID, input string, sink func(protocol.Event)) error
	// Continue runs a turn on the session's transcript as it is, without a
	// new user message: to go on after the step budget stopped a turn, or
	// to retry a request that failed before the model answered. It fails
	// when the model has answered the last message already.
	Continue(ctx context.Context, sessionID string, sink func(protocol.Event)) error
	// Enqueue stores a message typed while the session is busy; Run sends
	// it when the current turn ends well. If the turn is cancelled or
	// fails, it reports input.returned with the message instead.
	Enqueue(ctx context.Context, sessionID, input string) (protocol.QueuedInput, error)
	// RemoveQueued takes a queued message out of the queue and returns
	// it, for the user to edit or drop; it fails once the message was
	// sent.
	RemoveQueued(ctx context.Context, sessionID string, id int64) (protocol.QueuedInput, error)
	// Answer answers a pending approval: Scope "once", "session" or
	// "always" (this project); Feedback is told to the model with a
	// rejection.
	Answer(ctx context.Context, a protocol.ResolveApproval) error
	// Cancel stops the session's running turn; false if none runs.
	Cancel(sessionID string) bool
	// Mode is the permission mode of this process.
	Mode() string
	// Modes are the permission modes Shift+Tab cycles through.
	Modes() []string
	// SetMode sets the permission mode of the session's next turns and
	// returns the mode in force.
	SetMode(ctx context.Context, sessionID, mode string) (string, error)
	// Permissions describes the mode and the rules that apply to the
	// session, one line each.
	Permissions(ctx context.Context, sessionID string) ([]string, error)
	// ModelCommand runs a /model command (args after "/model"; none shows
	// the status) for the session and returns what it printed and the
	// session's model afterwards. The handlers ask the user through
	// prompt (/model switch, the wizard); it may be nil.
	ModelCommand(ctx context.Context, sessionID string, args []string, prompt modelcmd.Prompter) (out, model string, err error)
	// Compact summarises the session's older messages now (/compact),
	// following the optional instructions, reporting events (among them
	// the compaction event) to sink. It returns false and no error when
	// there is nothing to compact yet.
	Compact(ctx context.Context, sessionID, instructions string, sink func(protocol.Event)) (bool, error)
}

// sandboxReporter is a Backend that names the command sandbox in force
// ("sandbox: bwrap", "no sandbox"), shown on the status line.
type sandboxReporter interface {
	Sandbox() string
}
