package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// Driver is the core as the programmatic front doors see it: the Agent
// Client Protocol agent (internal/acp) and the app server
// (internal/appserver). Each maps its wire format onto these calls and
// protocol.Events back; what a turn does, how an answer to an approval
// becomes a grant and how a turn's end is classified are decided here, once
// for both. It serves sessions of any workspace and is safe for concurrent
// use.
type Driver struct {
	a     *App
	model string
	log   *slog.Logger

	mu sync.Mutex
	// rejected holds, per session, the approvals the user rejected "for
	// the rest of the session" (by approvalKey).
	rejected map[string]map[string]bool
}

// NewDriver returns the Driver of a; model, if set, is the model chosen on
// the command line for new sessions and turns.
func NewDriver(a *App, model string) *Driver {
	log := a.opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Driver{a: a, model: model, log: log, rejected: make(map[string]map[string]bool)}
}

// Editor is the user's editor offering its files to the file tools; see
// tools.Editor.
type Editor = tools.Editor

// ErrUnknownSession is returned for a session id the store does not have.
var ErrUnknownSession = errors.New("no such session")

// NotReadyError says no model is ready to serve turns: a provider to
// configure, a key to give. Its message names the command that fixes it.
type NotReadyError struct{ Err error }

func (e *NotReadyError) Error() string { return e.Err.Error() }
func (e *NotReadyError) Unwrap() error { return e.Err }

// Ready returns nil if the model new turns would use is ready, else a
// *NotReadyError.
func (d *Driver) Ready() error {
	if _, err := d.a.ResolveModel(d.model); err != nil {
		return &NotReadyError{Err: err}
	}
	return nil
}

// NewSession stores a new idle session in workspace (an absolute
// directory) on the chosen model, else the default one.
func (d *Driver) NewSession(ctx context.Context, workspace string, sink func(protocol.Event)) (protocol.Session, error) {
	m, err := d.a.ResolveModel(d.model)
	if err != nil {
		return protocol.Session{}, &NotReadyError{Err: err}
	}
	s, err := d.a.Core.CreateSession(ctx, workspace, m.ID, sink)
	if err != nil {
		return protocol.Session{}, err
	}
	return *s, nil
}

// Session returns a stored session; ErrUnknownSession if there is none.
func (d *Driver) Session(ctx context.Context, id string) (protocol.Session, error) {
	s, err := d.a.Store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return protocol.Session{}, fmt.Errorf("%w: %s", ErrUnknownSession, id)
	}
	if err != nil {
		return protocol.Session{}, err
	}
	return *s, nil
}

// Sessions returns the sessions of workspace (all if empty), most recent
// first, at most limit of them (0: all).
func (d *Driver) Sessions(ctx context.Context, workspace string, limit int) ([]protocol.Session, error) {
	return d.a.Store.ListSessions(ctx, store.ListOptions{Workspace: workspace, Limit: limit})
}

// Messages returns a session's stored transcript.
func (d *Driver) Messages(ctx context.Context, id string) ([]protocol.Message, error) {
	if _, err := d.Session(ctx, id); err != nil {
		return nil, err
	}
	return d.a.Store.Messages(ctx, id, 0)
}

// Events returns a session's stored events after sequence after, in order.
func (d *Driver) Events(ctx context.Context, id string, after int64) ([]protocol.Event, error) {
	if _, err := d.Session(ctx, id); err != nil {
		return nil, err
	}
	const page = 1000
	var all []protocol.Event
	for {
		evs, err := d.a.Store.Events(ctx, id, after, page)
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
		if len(evs) < page {
			return all, nil
		}
		after = evs[len(evs)-1].Sequence
	}
}

// SetEditor makes the session's file tools read and write through the
// user's editor; nil goes back to the disk.
func (d *Driver) SetEditor(sessionID string, ed Editor) { d.a.Core.SetEditor(sessionID, ed) }

// Cancel cancels the session's running turn, if this process runs one.
func (d *Driver) Cancel(sessionID string) bool { return d.a.Core.Cancel(sessionID) }

// Mode describes one permission mode for a client's menu.
type Mode struct {
	ID          string
	Name        string
	Description string
}

// Modes returns the permission modes a session may be switched to.
func Modes() []Mode {
	return []Mode{
		{string(permission.ModeDefault), "Default", "Reads are allowed; edits and commands ask first."},
		{string(permission.ModeAcceptEdits), "Accept edits", "Edits inside the workspace are allowed; commands ask first."},
		{string(permission.ModePlan), "Plan", "Read-only: edits and commands are refused with guidance."},
		{string(permission.ModeBypass), "Bypass", "Everything is allowed except deny rules and hard checks."},
	}
}

// Mode returns the permission mode of the session's turns.
func (d *Driver) Mode(ctx context.Context, sessionID string) (string, error) {
	s, err := d.Session(ctx, sessionID)
	if err != nil {
		return "", err
	}
	p, err := d.a.policy(ctx, &s)
	if err != nil {
		return "", err
	}
	return p.Mode().String(), nil
}

// SetMode switches the permission mode of the session's turns in this
// process, from its next tool call on. An unknown mode is an error that
// lists the valid ones.
func (d *Driver) SetMode(ctx context.Context, sessionID, mode string) error {
	m, err := permission.ParseMode(mode)
	if err != nil {
		return err
	}
	if _, err := d.Session(ctx, sessionID); err != nil {
		return err
	}
	d.a.sessionModes.Store(sessionID, m)
	return nil
}

// Turn is one user message for Run.
type Turn struct {
	SessionID string
	Input     string
	// Model, if set, switches the session to this model from this turn on.
	Model string
	// Images are pictures sent with Input (see DecodeImages).
	Images []protocol.Image
	// Approver answers the turn's approvals; nil denies every call that
	// needs one (the model is told nobody could approve it).
	Approver Approver
}

// Approver asks the user about one call that needs approval. It is called
// on a goroutine of its own while the turn waits; an error (or ctx ending)
// rejects the call.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// ApprovalRequest is a call waiting for the user's decision.
type ApprovalRequest struct {
	SessionID  string
	TurnID     string
	RequestID  string
	ToolCallID string
	ToolName   string
	Arguments  json.RawMessage
	// Summary describes the call for people.
	Summary string
	// Rule is the narrowest rule that would allow such calls, saved by
	// DecisionAllowSession and DecisionAllowAlways; empty if none.
	Rule string
	// Reason says why the call needs approval.
	Reason string
}

// Decision is the user's answer to an approval.
type Decision string

// The decisions a user may give.
const (
	// DecisionAllowOnce runs this call.
	DecisionAllowOnce Decision = "allow_once"
	// DecisionAllowSession runs it and allows calls its rule covers for
	// the rest of the session (a session grant).
	DecisionAllowSession Decision = "allow_session"
	// DecisionAllowAlways runs it and allows calls its rule covers in this
	// workspace from now on (a project grant, stored).
	DecisionAllowAlways Decision = "allow_always"
	// DecisionRejectOnce refuses this call; the model is told.
	DecisionRejectOnce Decision = "reject_once"
	// DecisionRejectAlways refuses it and, for the rest of the session in
	// this process, every call its rule (else its tool) covers, without
	// asking.
	DecisionRejectAlways Decision = "reject_always"
	// DecisionCancel refuses it and cancels the turn.
	DecisionCancel Decision = "cancel"
)

// Stop is how a turn ended, for the front doors' own words.
type Stop string

// The ways a turn ends.
const (
	// StopEndTurn: the model answered without asking for tools.
	StopEndTurn Stop = "end_turn"
	// StopMaxTokens: the model's answer was cut at its output limit, or a
	// token budget was spent.
	StopMaxTokens Stop = "max_tokens"
	// StopMaxSteps: the iteration budget (or another budget of the turn:
	// time, cost) was spent, or the model kept repeating a call.
	StopMaxSteps Stop = "max_steps"
	// StopRefusal: the provider refused to answer (content filter).
	StopRefusal Stop = "refusal"
	// StopCancelled: the turn was cancelled.
	StopCancelled Stop = "cancelled"
	// StopFailed: the turn failed with Err.
	StopFailed Stop = "failed"
)

// Outcome is how a turn ended; Err is set for every Stop but StopEndTurn
// and says why.
type Outcome struct {
	Stop Stop
	Err  error
}

// Run takes one user message through a turn, reporting every event to sink
// (called from one goroutine at a time; it must not block for long).
// Approvals go to t.Approver while the turn waits; a turn that finds the
// session waiting for an approval stored by another process fails with the
// reason, its message queued.
func (d *Driver) Run(ctx context.Context, t Turn, sink func(protocol.Event)) Outcome {
	actx, cancel := context.WithCancel(ctx)
	var asks sync.WaitGroup
	defer func() {
		cancel()
		asks.Wait()
	}()
	var finish string
	wrapped := func(e protocol.Event) {
		if e.ParentSessionID == "" && e.Type == protocol.EventMessageCompleted && e.Message != nil && e.Message.Role == protocol.RoleAssistant {
			finish = e.FinishReason
		}
		// A subagent's events are not the turn's own: the front doors
		// show the parent's progress, and only a subagent's approvals
		// (through the Approver below) reach them.
		if sink != nil && e.ParentSessionID == "" {
			sink(e)
		}
		if e.Type == protocol.EventPermissionRequested && t.Approver != nil {
			asks.Add(1)
			go func() {
				defer asks.Done()
				d.ask(actx, t, e)
			}()
		}
	}
	onAsk := agent.AskWait
	if t.Approver == nil {
		onAsk = agent.AskDeny
	}
	model := t.Model
	if model == "" {
		model = d.model
	}
	err := d.a.Core.Run(ctx, agent.TurnRequest{SessionID: t.SessionID, Input: t.Input, Model: model, OnAsk: onAsk,
		Budget: d.a.Budget(), Images: t.Images}, wrapped)
	return classify(ctx, err, finish)
}

// classify turns a turn's error and the finish reason of its last answer
// into an Outcome.
func classify(ctx context.Context, err error, finish string) Outcome {
	var maxIter *agent.MaxIterationsError
	var loop *agent.LoopError
	var budget *agent.BudgetError
	var cfg *agent.ConfigError
	switch {
	case err == nil:
		switch finish {
		case "length":
			return Outcome{Stop: StopMaxTokens, Err: errors.New("the model's answer was cut at its output token limit")}
		case "content_filter":
			return Outcome{Stop: StopRefusal, Err: errors.New("the provider refused to answer (content filter)")}
		}
		return Outcome{Stop: StopEndTurn}
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return Outcome{Stop: StopCancelled, Err: err}
	case errors.As(err, &maxIter), errors.As(err, &loop):
		return Outcome{Stop: StopMaxSteps, Err: err}
	case errors.As(err, &budget):
		if strings.Contains(budget.What, "tokens") {
			return Outcome{Stop: StopMaxTokens, Err: err}
		}
		return Outcome{Stop: StopMaxSteps, Err: err}
	case errors.As(err, &cfg):
		return Outcome{Stop: StopFailed, Err: &NotReadyError{Err: err}}
	}
	return Outcome{Stop: StopFailed, Err: err}
}

// ask gets the user's decision on one approval and answers it.
func (d *Driver) ask(ctx context.Context, t Turn, e protocol.Event) {
	req := ApprovalRequest{SessionID: e.SessionID, TurnID: e.TurnID, RequestID: e.RequestID, ToolCallID: e.ToolCallID,
		ToolName: e.ToolName, Arguments: e.Arguments, Summary: e.Summary, Rule: e.Text, Reason: e.Error}
	key := approvalKey(req)
	var dec Decision
	var feedback string
	if d.isRejected(req.SessionID, key) {
		dec, feedback = DecisionRejectOnce, "The user rejected such calls for the rest of this session."
	} else {
		var err error
		if dec, err = t.Approver(ctx, req); err != nil {
			if ctx.Err() != nil {
				return // the turn is over; nothing waits
			}
			d.log.Warn("approval request failed; rejecting the call", "session", req.SessionID, "err", err)
			dec, feedback = DecisionRejectOnce, "The approval could not be asked: "+err.Error()
		}
	}
	ans := agent.ResolveRequest{SessionID: req.SessionID, RequestID: req.RequestID}
	switch dec {
	case DecisionAllowOnce:
		ans.Approve, ans.Scope = true, protocol.ScopeOnce
	case DecisionAllowSession:
		ans.Approve, ans.Scope = true, protocol.ScopeSession
	case DecisionAllowAlways:
		ans.Approve, ans.Scope = true, protocol.ScopeAlways
	case DecisionRejectAlways:
		d.reject(req.SessionID, key)
		feedback = "The user rejected such calls for the rest of this session."
	case DecisionCancel:
		defer d.Cancel(req.SessionID)
	case DecisionRejectOnce:
	default:
		d.log.Warn("unknown approval decision; rejecting the call", "decision", dec)
	}
	ans.Feedback = feedback
	if err := d.a.Core.Answer(ctx, ans, nil); err != nil && ctx.Err() == nil {
		d.log.Warn("answer approval", "session", req.SessionID, "request", req.RequestID, "err", err)
	}
}

// approvalKey is what a "reject always" covers: the call's rule, else its
// tool.
func approvalKey(r ApprovalRequest) string {
	if r.Rule != "" {
		return "rule:" + r.Rule
	}
	return "tool:" + r.ToolName
}

func (d *Driver) isRejected(sessionID, key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rejected[sessionID][key]
}

func (d *Driver) reject(sessionID, key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rejected[sessionID] == nil {
		d.rejected[sessionID] = make(map[string]bool)
	}
	d.rejected[sessionID][key] = true
}
