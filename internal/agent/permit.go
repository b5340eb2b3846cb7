package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// AskPolicy says what a turn does with a call that needs a person's
// approval.
type AskPolicy int

const (
	// AskDeny denies the call and tells the model why: nobody can answer
	// (headless runs fail closed).
	AskDeny AskPolicy = iota
	// AskPause stores the approval with the rest of the response's calls,
	// sets the session waiting_for_approval and ends the turn with a
	// *PausedError; Core.Resolve continues it, in this process or another.
	AskPause
	// AskWait stores the approval the same way, then waits for an answer
	// (Core.Answer, from any front end of any process: the first answer
	// wins) and goes on in this process. If the process exits meanwhile,
	// the stored approval is answered later as with AskPause.
	AskWait
)

// PausedError ends a turn that stopped at a call needing approval.
type PausedError struct {
	SessionID string
	RequestID string
	// Summary describes the call waiting for approval.
	Summary string
	// Suggest is the narrowest rule that would allow such calls, if any.
	Suggest string
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("paused: %s needs approval (request %s)", e.Summary, e.RequestID)
}

// PolicyFunc builds the permission policy for a turn of a session: the
// mode, the user's and (if trusted) the project's rules, and the grants.
// Its errors (a malformed settings file) stop the turn before it starts.
type PolicyFunc func(ctx context.Context, sess *protocol.Session) (*permission.Policy, error)

// RejectedResult starts the result of a call the user rejected.
const RejectedResult = "User rejected this tool call"

// decide asks the policy about a prepared call and records the decision in
// the audit log.
func (t *turn) decide(c *call) permission.Decision {
	if t.policy == nil {
		return combineHook(permission.Decision{Tool: c.Name, Action: permission.Allow}, c.hook)
	}
	req := permission.Request{
		Tool: c.Name, Risk: string(c.tool.Info().Risk), Args: c.args,
		Workspace: t.ws.Root(), Roots: t.ws.Allowed(), Home: t.core.opts.Home,
	}
	if paths, err := permission.ArgPaths(c.Name, c.args); err == nil {
		for _, p := range paths {
			abs, _, err := t.ws.Resolve(p)
			if err != nil {
				// Outside the workspace: the tool refuses it anyway;
				// decide on the cleaned path.
				abs = p
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(t.ws.Root(), p)
				}
				abs = filepath.Clean(abs)
			}
			req.Paths = append(req.Paths, abs)
		}
	}
	d := t.sandboxGate(c, combineHook(t.policy.Decide(req), c.hook))
	t.audit(c, protocol.AuditDecision(d.Action), protocol.AuditSource(d.Source.String()))
	return d
}

// hidden returns what call c's tool must leave out of its results: the
// paths the policy denies that tool to read (deny rules, secret stores).
func (t *turn) hidden(c *call) func(abs string) bool {
	p, root, home := t.policy, t.ws.Root(), t.core.opts.Home
	if p == nil {
		return nil
	}
	return func(abs string) bool { return p.ReadDenied(c.Name, abs, root, home) }
}

// audit records a decision. It is stored with the turn's next batch of
// records — before the call's result, at the latest.
func (t *turn) audit(c *call, decision protocol.AuditDecision, source protocol.AuditSource) {
	e := &protocol.AuditEntry{SessionID: t.sess.ID, Tool: c.Name, Summary: c.summary, Decision: decision,
		Source: source, CreatedAt: t.core.opts.Now().UTC()}
	t.auditMu.Lock()
	t.audits = append(t.audits, e)
	t.auditMu.Unlock()
}

// takeAudit returns and forgets the decisions not stored yet.
func (t *turn) takeAudit() []*protocol.AuditEntry {
	t.auditMu.Lock()
	defer t.auditMu.Unlock()
	a := t.audits
	t.audits = nil
	return a
}

// deniedResult is the tool result for a call the policy denied.
func deniedResult(d permission.Decision) string {
	reason := d.Reason
	if reason == "" {
		reason = "not allowed (" + d.Source.String() + ")"
	}
	return "Tool failed: permission denied: " + reason
}

// unansweredResult is the tool result for a call that needed approval in
// a turn where nobody can give it.
func unansweredResult(c *call, d permission.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool failed: permission denied: %q needs the user's approval", c.summary)
	if d.Reason != "" {
		fmt.Fprintf(&b, " (%s)", d.Reason)
	}
	b.WriteString(", and nobody can approve it in this non-interactive run.")
	if d.Suggest != "" {
		fmt.Fprintf(&b, " The user can allow such calls with the rule %s.", d.Suggest)
	}
	b.WriteString(" Continue without it if you can, or explain to the user what you need and why.")
	return b.String()
}

// pause stores a pending approval for c with the calls after it, sets the
// session waiting_for_approval and returns the *PausedError that ends the
// turn.
func (t *turn) pause(c *call, d permission.Decision, rest []*call) error {
	a, err := t.createApproval(c, d, rest, "")
	if err != nil {
		return err
	}
	if err := t.requested(a, c, d); err != nil {
		return err
	}
	t.notifyWaiting(c)
	return &PausedError{SessionID: t.sess.ID, RequestID: a.ID, Summary: c.summary, Suggest: d.Suggest}
}

// createApproval stores the save point of a call that needs approval: the
// call, its summary and the calls after it; the session waits.
func (t *turn) createApproval(c *call, d permission.Decision, rest []*call, waiter string) (*protocol.Approval, error) {
	// The approval points at a call of the stored answer.
	if err := t.flushHeld(); err != nil {
		return nil, err
	}
	a := &protocol.Approval{ID: newID(), SessionID: t.sess.ID, TurnID: t.id, Call: c.ToolCall, Summary: c.summary, Waiter: waiter}
	for _, r := range rest {
		a.Remaining = append(a.Remaining, r.ToolCall)
	}
	if err := t.core.opts.Store.CreateApproval(t.bg, a); err != nil {
		return nil, fmt.Errorf("store approval: %w", err)
	}
	if err := t.setStatus(protocol.StatusWaitingForApproval, ""); err != nil {
		return nil, err
	}
	return a, nil
}

// requested emits permission.requested for a stored approval.
func (t *turn) requested(a *protocol.Approval, c *call, d permission.Decision) error {
	return t.emit(protocol.Event{Type: protocol.EventPermissionRequested, RequestID: a.ID, ToolCallID: c.ID,
		ToolName: c.Name, Arguments: protocol.RawJSON(c.Arguments), Summary: c.summary, Text: d.Suggest,
		Error: d.Reason, Step: t.step})
}

// wait stores the approval of c and waits for an answer, given in this
// process or another (see answer.go). It returns the call's outcome: run
// (approved) or the rejection.
func (t *turn) wait(c *call, d permission.Decision, rest []*call) (outcome, error) {
	a, err := t.createApproval(c, d, rest, t.core.opts.Owner)
	if err != nil {
		return outcome{}, err
	}
	// Register before anyone can see the request, so a fast answer is not
	// missed.
	wake := make(chan struct{}, 1)
	t.core.mu.Lock()
	t.core.waiters[a.ID] = wake
	t.core.mu.Unlock()
	defer func() {
		t.core.mu.Lock()
		delete(t.core.waiters, a.ID)
		t.core.mu.Unlock()
	}()
	if err := t.requested(a, c, d); err != nil {
		return outcome{}, err
	}
	t.notifyWaiting(c)
	waitStart := time.Now()
	ans, err := t.waitAnswer(a, wake)
	if err != nil {
		return outcome{}, err
	}
	t.waited += time.Since(waitStart) // the user's time, not the model's
	if err := t.setStatus(protocol.StatusRunning, ""); err != nil {
		return outcome{}, err
	}
	return t.answered(c, d, a, ans)
}

// answered applies an answer to the call it was given for: emits
// permission.resolved, records the decision, stores a grant, and runs the
// call or makes the rejection its result.
func (t *turn) answered(c *call, d permission.Decision, a *protocol.Approval, ans ResolveRequest) (outcome, error) {
	ok := ans.Approve
	status := protocol.ApprovalRejected
	if ok {
		status = protocol.ApprovalApproved
	}
	// permission.resolved carries the approval's status in the event's
	// status field (kept for the clients that read it there).
	if err := t.emit(protocol.Event{Type: protocol.EventPermissionResolved, RequestID: a.ID, ToolCallID: c.ID,
		ToolName: c.Name, Summary: c.summary, OK: &ok, Text: ans.Feedback, Status: protocol.SessionStatus(status),
		AnsweredBy: ans.By}); err != nil {
		return outcome{}, err
	}
	if c.early != "" {
		return outcome{content: c.early, isError: true}, nil
	}
	if !ans.Approve {
		t.audit(c, protocol.AuditDeny, protocol.AuditSourceUser)
		res := outcome{content: RejectedResult, isError: true}
		if fb := strings.TrimSpace(ans.Feedback); fb != "" {
			res.content += ". The user said: " + fb
		}
		return res, nil
	}
	if d.Action == permission.Deny {
		// An approval never lifts a deny rule or a hard check.
		return outcome{content: deniedResult(d), isError: true}, nil
	}
	t.audit(c, protocol.AuditAllow, protocol.AuditSourceUser+" ("+protocol.AuditSource(scopeName(ans.Scope))+")")
	if ans.Rule != "" {
		d.Suggest = ans.Rule
	}
	if err := t.grant(c, d, ans.Scope); err != nil {
		return outcome{}, err
	}
	return t.execute(c)
}

// Answer answers a pending approval, wherever its turn is. If a turn of
// this process waits for it (AskWait), the answer goes to that turn; if a
// turn of another process waits for it (WaitsElsewhere: the REPL, another
// server), the answer is stored and that turn takes it and goes on there;
// otherwise the paused turn is resumed here, as Resolve does, and its
// events go to sink. Of several answers to one approval, from any
// processes, the first wins; the others get ErrNoPendingApproval.
func (c *Core) Answer(ctx context.Context, req ResolveRequest, sink Sink) error {
	if err := checkAnswer(req); err != nil {
		return err
	}
	c.mu.Lock()
	wake, waiting := c.waiters[req.RequestID]
	c.mu.Unlock()
	if !waiting {
		a, err := c.pendingApproval(ctx, req)
		if err != nil {
			return err
		}
		if !c.WaitsElsewhere(ctx, *a) {
			return c.Resolve(ctx, req, sink)
		}
		if req.By == "" {
			req.By = AnsweredElsewhere
		}
	}
	if err := c.opts.Store.ResolveApproval(ctx, req.SessionID, req.RequestID, resolution(req)); err != nil {
		return fmt.Errorf("%w: %v", ErrNoPendingApproval, err)
	}
	if waiting {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// ResolveRequest answers a pending approval.
type ResolveRequest struct {
	SessionID string
	RequestID string
	Approve   bool
	// Scope of an approval: "once" (default), "session" (a grant for
	// this session) or "always" (a grant for the workspace). A grant is
	// the narrowest rule that covers the call, never a whole tool.
	Scope protocol.ApprovalScope
	// Feedback is given to the model with a rejection.
	Feedback string
	// Rule, if set, is the rule to save for a "session" or "always"
	// approval instead of the suggested narrowest one (the user edited
	// it). It must be a valid rule that allows the call.
	Rule string
	// MaxIterations overrides the turn's iteration budget.
	MaxIterations int
	// OnAsk says what to do when a later call of the resumed turn needs
	// approval.
	OnAsk AskPolicy
	// Budget caps the resumed turn.
	Budget Budget
	// By names who answers, when it is not the front end of the process
	// that asked ("the web panel", "mx-claw approve"); the asking process
	// shows it.
	By string
}

// ErrNoPendingApproval is returned by Resolve for a request that is not
// pending (never existed, already answered, or cancelled).
var ErrNoPendingApproval = errors.New("no such pending approval")

// Resolve answers a pending approval and resumes its turn exactly there:
// the approved call runs (or gets the rejection as its result), then the
// rest of that model response's calls, then the next model step. It works
// from any process: the pause lives in the store.
func (c *Core) Resolve(ctx context.Context, req ResolveRequest, sink Sink) error {
	a, err := c.pendingApproval(ctx, req)
	if err != nil {
		return err
	}
	if err := checkAnswer(req); err != nil {
		return err
	}
	setup := turnSetup{sessionID: req.SessionID, maxIter: req.MaxIterations, onAsk: req.OnAsk, turnID: a.TurnID, budget: req.Budget}
	if err := c.drive(ctx, setup, sink, func(t *turn) error { return t.resume(a, req) }); err != nil {
		return err
	}
	setup.turnID = ""
	return c.runQueued(ctx, setup, sink)
}

// resume continues the turn paused at approval a.
func (t *turn) resume(a *protocol.Approval, req ResolveRequest) error {
	st := t.core.opts.Store
	if err := st.ResolveApproval(t.bg, t.sess.ID, a.ID, resolution(req)); err != nil {
		return fmt.Errorf("%w: %v", ErrNoPendingApproval, err)
	}
	if err := t.setStatus(protocol.StatusRunning, ""); err != nil {
		return err
	}
	history, err := t.core.transcript(t.bg, t.sess.ID)
	if err != nil {
		return fmt.Errorf("load transcript: %w", err)
	}
	// Rebuild what the turn knew: its steps so far and the calls it made
	// before the paused one (for duplicate detection).
	for _, m := range history {
		if m.TurnID != t.id || m.Role != protocol.RoleAssistant {
			continue
		}
		t.step++
		for _, tc := range m.ToolCalls {
			if tc.ID == a.Call.ID {
				break
			}
			t.seen[dupKey(tc)] = true
		}
	}
	c := t.prepare(a.Call)
	d := permission.Decision{Tool: c.Name, Action: permission.Allow}
	if c.early == "" && req.Approve {
		d = t.decide(c)
	}
	res, err := t.answered(c, d, a, req)
	if err != nil {
		return err
	}
	if err := t.recordResult(c, res); err != nil {
		return err
	}
	if err := t.runCalls(a.Remaining); err != nil {
		return err
	}
	history, err = t.core.transcript(t.bg, t.sess.ID)
	if err != nil {
		return fmt.Errorf("load transcript: %w", err)
	}
	if err := t.loadContext(history); err != nil {
		return err
	}
	t.startView()
	return t.loop()
}

// checkAnswer refuses an answer with an unknown scope or a malformed rule.
func checkAnswer(req ResolveRequest) error {
	switch req.Scope {
	case "", protocol.ScopeOnce, protocol.ScopeSession, protocol.ScopeAlways:
	default:
		return &ConfigError{Err: fmt.Errorf("approval scope %q: want once, session or always", req.Scope)}
	}
	if req.Rule != "" {
		if req.Scope != protocol.ScopeSession && req.Scope != protocol.ScopeAlways {
			return &ConfigError{Err: errors.New("a rule is saved only with a session or always approval")}
		}
		if _, err := permission.ParseRule(req.Rule); err != nil {
			return &ConfigError{Err: err}
		}
	}
	return nil
}

func scopeName(s protocol.ApprovalScope) protocol.ApprovalScope {
	if s == "" {
		return protocol.ScopeOnce
	}
	return s
}

// grant stores the narrowest rule covering c for the scope of an approval
// and applies it to the rest of this turn.
func (t *turn) grant(c *call, d permission.Decision, scope protocol.ApprovalScope) error {
	if scope != protocol.ScopeSession && scope != protocol.ScopeAlways || d.Suggest == "" || t.policy == nil {
		return nil
	}
	key, origin := "session:"+t.sess.ID, "session grant"
	if scope == protocol.ScopeAlways {
		key, origin = t.ws.Root(), "project grant"
	}
	if err := t.core.opts.Store.AddGrant(t.bg, key, d.Suggest); err != nil {
		return err
	}
	p, err := t.policy.WithGrants(permission.Grant{Rule: d.Suggest, Origin: origin})
	if err != nil {
		return fmt.Errorf("apply grant %s: %w", d.Suggest, err)
	}
	t.policy = p
	return nil
}
