package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// HooksFunc returns the hooks that apply to a session's turn: the user's
// and, once the workspace is trusted, the project's. Its errors (a
// malformed hooks entry) stop the turn before it starts. A nil result has
// no hooks.
type HooksFunc func(ctx context.Context, sess *protocol.Session) (*hooks.Runner, error)

// PromptBlockedError ends a turn whose prompt a UserPromptSubmit hook
// blocked (or stopped with "continue": false). The prompt is erased: it is
// not stored, does not title the session and is in no event.
type PromptBlockedError struct {
	// Reason is what the hooks said, for the user.
	Reason string
}

// PromptErased reports that the prompt must not be kept anywhere, not
// even in a front end's input history.
func (e *PromptBlockedError) PromptErased() bool { return true }

func (e *PromptBlockedError) Error() string {
	if e.Reason == "" {
		return "prompt blocked by a UserPromptSubmit hook"
	}
	return "prompt blocked by a UserPromptSubmit hook: " + e.Reason
}

// hookState is a turn's part of the hooks: the transcript written for
// them, and whether one asked the turn to stop.
type hookState struct {
	mu         sync.Mutex
	transcript *hooks.Transcript
	failed     bool   // writing the transcript failed (warned once)
	halted     bool   // a hook said "continue": false
	haltReason string // its stopReason
}

// halt records that a hook asked the turn to stop after the current event.
func (h *hookState) halt(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.halted {
		h.halted, h.haltReason = true, reason
	}
}

// isHalted reports whether a hook asked the turn to stop.
func (h *hookState) isHalted() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.halted
}

// HaltedCallResult is the result of a call the turn did not run because a
// hook stopped the turn first.
const HaltedCallResult = "Tool failed: a hook stopped the turn before this call ran."

// claudeMode spells a permission mode as Claude Code does in a hook's
// permission_mode.
func claudeMode(m permission.Mode) string {
	switch m {
	case permission.ModeBypass:
		return "bypassPermissions"
	case "":
		return string(permission.ModeDefault)
	}
	return string(m)
}

// runHooks runs the hooks of ev (if any would run) and reports their
// warnings as hook.warning events. Before they run, what the turn holds is
// stored and the transcript file brought up to date, so a hook that reads
// it sees what it judges. It may be called from tool goroutines.
func (t *turn) runHooks(ev hooks.Event) hooks.Result {
	if t.hooks == nil || t.hooks.Config == nil {
		return hooks.Result{}
	}
	ev.SessionID, ev.Cwd = t.sess.ID, t.ws.Root()
	if t.parent != nil {
		ev.AgentID, ev.AgentType = t.sess.ID, t.parent.def.Name
	}
	if !t.hooks.Wants(ev) {
		return hooks.Result{}
	}
	if err := t.flushHeld(); err != nil {
		t.core.log.Error("store before hooks", "session", t.sess.ID, "err", err)
	}
	mode := permission.ModeDefault
	if t.policy != nil {
		mode = t.policy.Mode()
	}
	ev.PermissionMode = claudeMode(mode)
	ev.TranscriptPath = t.syncTranscript()
	if t.parent != nil && (ev.Name == hooks.SubagentStart || ev.Name == hooks.SubagentStop) {
		// As in Claude Code: the parent's session and transcript, and the
		// subagent's own transcript beside them.
		p := t.parent.turn
		ev.SessionID, ev.Cwd = p.sess.ID, p.ws.Root()
		ev.AgentTranscriptPath = ev.TranscriptPath
		ev.TranscriptPath = p.syncTranscript()
	}
	res := t.hooks.Run(t.ctx, ev)
	for _, w := range res.Warnings {
		t.tell(protocol.Event{Type: protocol.EventHookWarning, Text: w, Step: t.step})
	}
	if res.Halt {
		t.hk.halt(res.StopReason)
	}
	return res
}

// syncTranscript writes the session's transcript for hooks and returns
// its path, or "" if there is none.
func (t *turn) syncTranscript() string {
	path := t.hooks.TranscriptPath(t.sess.ID)
	if path == "" {
		return ""
	}
	t.sinkMu.Lock()
	history := t.history
	t.sinkMu.Unlock()
	t.hk.mu.Lock()
	defer t.hk.mu.Unlock()
	if t.hk.transcript == nil {
		t.hk.transcript = hooks.NewTranscript(path, t.sess.ID, t.ws.Root())
	}
	if err := t.hk.transcript.Sync(history); err != nil {
		if !t.hk.failed {
			t.hk.failed = true
			t.tell(protocol.Event{Type: protocol.EventHookWarning, Text: "hooks get no transcript: " + err.Error(), Step: t.step})
		}
		return ""
	}
	return path
}

// hookNotices tells the user, once, what in the hooks settings loads but
// never runs (the runner remembers what was shown across runs; the Core
// within this process).
func (t *turn) hookNotices() {
	if t.hooks == nil {
		return
	}
	for _, n := range t.hooks.NewNotices() {
		t.core.mu.Lock()
		seen := t.core.noticed[n]
		if t.core.noticed == nil {
			t.core.noticed = make(map[string]bool)
		}
		t.core.noticed[n] = true
		t.core.mu.Unlock()
		if !seen {
			t.tell(protocol.Event{Type: protocol.EventHookWarning, Text: n})
		}
	}
}

// waitHooks waits for the turn's async hooks and reports what they said.
// They are killed if the turn was cancelled.
func (t *turn) waitHooks() {
	if t.hooks == nil {
		return
	}
	for _, w := range t.hooks.Wait(t.ctx) {
		t.tell(protocol.Event{Type: protocol.EventHookWarning, Text: w, Step: t.step})
	}
}

// sessionStart runs the SessionStart hooks of the turn's session the
// first time this process takes it up: "startup" for a new session,
// "resume" for one with a transcript. It returns what they add for the
// model.
func (t *turn) sessionStart(isNew bool) string {
	if t.parent != nil {
		// A subagent gets SubagentStart instead, once: it has one turn.
		return t.runHooks(hooks.Event{Name: hooks.SubagentStart}).AdditionalContext
	}
	t.core.mu.Lock()
	started := t.core.started[t.sess.ID]
	if t.core.started == nil {
		t.core.started = make(map[string]bool)
	}
	t.core.started[t.sess.ID] = true
	t.core.mu.Unlock()
	if started && !isNew {
		return ""
	}
	source := "startup"
	if !isNew {
		source = "resume"
	}
	return t.runHooks(hooks.Event{Name: hooks.SessionStart, Source: source, Model: t.model.ID}).AdditionalContext
}

// preToolUse runs the PreToolUse hooks of a prepared call. A block becomes
// the call's early result; an updated input is validated again and
// replaces the arguments. It returns the hooks' permission decision, which
// decide folds in with hooks.Combine (a hook never lifts a deny).
func (t *turn) preToolUse(c *call) hooks.Decision {
	if c.early != "" {
		return hooks.None
	}
	res := t.runHooks(hooks.Event{Name: hooks.PreToolUse, ToolName: c.Name, ToolUseID: c.ID, ToolInput: c.args})
	if res.Halt && !res.Blocked() {
		res.Decision, res.Reason = hooks.Block, "the hook stopped the turn"
		if res.StopReason != "" {
			res.Reason += ": " + res.StopReason
		}
	}
	if res.Blocked() {
		reason := strings.TrimSpace(res.Reason)
		if reason == "" {
			reason = "no reason given"
		}
		c.early = "Tool failed: blocked by a hook: " + reason
		t.audit(c, protocol.AuditDeny, protocol.AuditSourceHook)
		return res.Decision
	}
	if !t.rewrite(c, res.UpdatedInput) {
		return hooks.None
	}
	if res.AdditionalContext != "" {
		c.context = res.AdditionalContext
	}
	return res.Decision
}

// rewrite replaces c's arguments by a hook's updated input after checking
// them against the tool's schema; an invalid one becomes c's early result
// and rewrite returns false.
func (t *turn) rewrite(c *call, updated json.RawMessage) bool {
	if len(updated) == 0 {
		return true
	}
	if err := t.tools.Validate(c.Name, updated); err != nil {
		c.early = "Tool failed: a hook rewrote the arguments into invalid ones: " + err.Error()
		return false
	}
	c.args = updated
	c.Arguments = string(updated)
	c.summary = c.tool.Summary(c.args)
	return true
}

// permissionRequest runs the PermissionRequest hooks of a call that needs
// the user's approval, before anyone is asked: a hook may allow it (with
// updated arguments, decided on again) or deny it. Asks that must stand
// whatever anyone says (hard checks, commands that cannot be judged) are
// not lifted by a hook's allow. It returns the decision to act on.
func (t *turn) permissionRequest(c *call, d permission.Decision) permission.Decision {
	res := t.runHooks(hooks.Event{Name: hooks.PermissionRequest, ToolName: c.Name, ToolUseID: c.ID, ToolInput: c.args})
	switch {
	case res.Blocked():
		d.Action, d.Source = permission.Deny, permission.Source{Kind: permission.SourceHook}
		d.Reason = strings.TrimSpace(res.Reason)
		if d.Reason == "" {
			d.Reason = "a PermissionRequest hook denied it"
		}
		t.audit(c, protocol.AuditDecision(d.Action), protocol.AuditSource(d.Source.String()))
	case res.Decision == hooks.Allow && liftable(d):
		if len(res.UpdatedInput) > 0 {
			if !t.rewrite(c, res.UpdatedInput) {
				d.Action, d.Reason = permission.Deny, strings.TrimPrefix(c.early, "Tool failed: ")
				return d
			}
			// The call that runs is the rewritten one: decide on it.
			nd := t.decide(c)
			if nd.Action != permission.Ask || !liftable(nd) {
				return nd
			}
			d = nd
		}
		d.Action, d.Source = permission.Allow, permission.Source{Kind: permission.SourceHook}
		t.audit(c, protocol.AuditDecision(d.Action), protocol.AuditSource(d.Source.String()))
	}
	return d
}

// liftable reports whether a hook's allow may turn ask decision d into an
// allow: an ask from a rule or the mode may be, one from a hard check or
// a command the classifier cannot judge may not.
func liftable(d permission.Decision) bool {
	switch d.Source.Kind {
	case permission.SourceHardCheck, permission.SourceParseFailure:
		return false
	}
	return true
}

// notifyWaiting runs the Notification hooks when the turn waits for the
// user to approve c.
func (t *turn) notifyWaiting(c *call) {
	t.runHooks(hooks.Event{Name: hooks.Notification, NotificationType: "permission_prompt", Title: "Permission needed",
		Message: "mx-claw needs your permission to use " + hooks.ClaudeName(c.Name)})
}

// postToolUse runs the PostToolUse hooks of a call that succeeded, or the
// PostToolUseFailure hooks of one that failed, and adds what they say for
// the model to its result.
func (t *turn) postToolUse(c *call, o outcome) outcome {
	if t.hooks == nil {
		return o
	}
	ev := hooks.Event{Name: hooks.PostToolUse, ToolName: c.Name, ToolUseID: c.ID, ToolInput: c.args,
		ToolResult: o.content, Before: c.before}
	if o.isError {
		ev.Name, ev.ToolFailed = hooks.PostToolUseFailure, true
		ev.Interrupted = strings.Contains(o.content, "[command timed out after")
	}
	res := t.runHooks(ev)
	var notes []string
	if res.Blocked() && strings.TrimSpace(res.Reason) != "" {
		notes = append(notes, "Hook feedback: "+strings.TrimSpace(res.Reason))
	}
	if res.AdditionalContext != "" {
		notes = append(notes, res.AdditionalContext)
	}
	if c.context != "" {
		notes = append([]string{c.context}, notes...)
	}
	if len(notes) > 0 {
		o.content = strings.TrimRight(o.content, "\n") + "\n\n" + strings.Join(notes, "\n")
	}
	return o
}

// snapshot records, for the PostToolUse hooks of c, what the files it
// writes hold before it runs.
func (t *turn) snapshot(c *call) {
	if t.hooks != nil && c.tool != nil && c.tool.Info().Risk == tools.RiskWrite {
		c.before = t.hooks.Snapshot(hooks.Event{ToolName: c.Name, ToolInput: c.args, Cwd: t.ws.Root()})
	}
}

// maxEnvFile bounds the CLAUDE_ENV_FILE read for each command.
const maxEnvFile = 64 << 10

// commandSetup returns what SessionStart hooks wrote to the session's
// CLAUDE_ENV_FILE, which run_command evaluates before each command so
// that its exports reach the session's commands.
func (t *turn) commandSetup() string {
	if t.hooks == nil {
		return ""
	}
	path := t.hooks.EnvFile(t.sess.ID)
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxEnvFile))
	return string(data)
}

// combineHook folds a PreToolUse hook decision into the policy's. A hook's
// allow does not lift an ask that must stand (see liftable).
func combineHook(d permission.Decision, h hooks.Decision) permission.Decision {
	if h == hooks.None || h == hooks.Allow && d.Action == permission.Ask && !liftable(d) {
		return d
	}
	a := hooks.Combine(d.Action, h)
	if a != d.Action {
		d.Action = a
		d.Source = permission.Source{Kind: permission.SourceHook}
		if a == permission.Deny && d.Reason == "" {
			d.Reason = "a PreToolUse hook denied it"
		}
	}
	return d
}

// userPromptSubmit runs the UserPromptSubmit hooks: a block (or a stop)
// ends the turn with the prompt erased; additional context is added to
// the prompt the model sees.
func (t *turn) userPromptSubmit(input string) (string, error) {
	res := t.runHooks(hooks.Event{Name: hooks.UserPromptSubmit, Prompt: input})
	if res.Blocked() || res.Halt {
		reason := strings.TrimSpace(res.Reason)
		if !res.Blocked() {
			reason = strings.TrimSpace(res.StopReason)
		}
		return "", &PromptBlockedError{Reason: reason}
	}
	if res.AdditionalContext != "" {
		input += "\n\n" + res.AdditionalContext
	}
	return input, nil
}

// afterCompaction runs the PostCompact hooks and the SessionStart hooks
// with source "compact", as Claude Code does after a compaction; what the
// latter add for the model is stored as a user message after the summary.
func (t *turn) afterCompaction(trigger, summary string) error {
	t.runHooks(hooks.Event{Name: hooks.PostCompact, Trigger: trigger, CompactSummary: summary})
	res := t.runHooks(hooks.Event{Name: hooks.SessionStart, Source: "compact", Model: t.model.ID})
	if res.AdditionalContext == "" {
		return nil
	}
	msg := protocol.Message{Role: protocol.RoleUser, Content: "SessionStart hook context:\n" + res.AdditionalContext}
	if err := t.record([]*protocol.Message{&msg}, protocol.Event{Type: protocol.EventMessageCompleted, Message: &msg, Step: t.step}); err != nil {
		return fmt.Errorf("store hook context: %w", err)
	}
	return nil
}

// EndSession runs the SessionEnd hooks of a session, for a front end that
// is done with it: reason is Claude Code's ("other" at the end of a run,
// "prompt_input_exit" when the user leaves the REPL, "clear" for /clear).
// Their warnings go to sink; it returns when they (async ones included)
// have ended.
func (c *Core) EndSession(ctx context.Context, sessionID, reason string, sink Sink) error {
	if c.opts.Hooks == nil {
		return nil
	}
	sess, err := c.opts.Store.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	r, err := c.opts.Hooks(ctx, sess)
	if err != nil || r == nil {
		return err
	}
	mode := permission.ModeDefault
	if c.opts.Permissions != nil {
		if p, err := c.opts.Permissions(ctx, sess); err == nil {
			mode = p.Mode()
		}
	}
	ev := hooks.Event{Name: hooks.SessionEnd, SessionID: sess.ID, Cwd: sess.Workspace, Reason: reason,
		PermissionMode: claudeMode(mode)}
	if !r.Wants(ev) {
		return nil
	}
	if path := r.TranscriptPath(sess.ID); path != "" {
		msgs, err := c.opts.Store.Messages(ctx, sess.ID, 0)
		if err == nil && hooks.NewTranscript(path, sess.ID, sess.Workspace).Sync(msgs) == nil {
			ev.TranscriptPath = path
		}
	}
	res := r.Run(ctx, ev)
	warnings := append(res.Warnings, r.Wait(ctx)...)
	for _, w := range warnings {
		e := protocol.Event{Type: protocol.EventHookWarning, SessionID: sess.ID, Text: w}
		if sink != nil {
			sink(e)
		}
	}
	return nil
}
