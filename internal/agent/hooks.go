package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// HooksFunc returns the hooks that apply to a session's turn: the user's
// and, once the workspace is trusted, the project's. Its errors (a
// malformed hooks entry) stop the turn before it starts. A nil result has
// no hooks.
type HooksFunc func(ctx context.Context, sess *protocol.Session) (*hooks.Runner, error)

// runHooks runs the hooks of ev (if any) and reports their warnings as
// hook.warning events.
func (t *turn) runHooks(ev hooks.Event) hooks.Result {
	if t.hooks == nil || t.hooks.Config == nil || t.hooks.Config.Len() == 0 {
		return hooks.Result{}
	}
	// A hook may read the transcript: it must hold what the hooks judge.
	if err := t.flushHeld(); err != nil {
		t.core.log.Error("store before hooks", "session", t.sess.ID, "err", err)
	}
	ev.SessionID, ev.Cwd = t.sess.ID, t.ws.Root()
	if t.policy != nil {
		ev.PermissionMode = string(t.policy.Mode())
	}
	res := t.hooks.Run(t.ctx, ev)
	for _, w := range res.Warnings {
		t.emit(protocol.Event{Type: protocol.EventHookWarning, Text: w, Step: t.step})
	}
	return res
}

// preToolUse runs the PreToolUse hooks of a prepared call. A block becomes
// the call's early result; an updated input is validated again and
// replaces the arguments. It returns the hooks' permission decision, which
// decide folds in with hooks.Combine (a hook never lifts a deny).
func (t *turn) preToolUse(c *call) hooks.Decision {
	if c.early != "" {
		return hooks.None
	}
	res := t.runHooks(hooks.Event{Name: hooks.PreToolUse, ToolName: c.Name, ToolInput: c.args})
	if res.Blocked() {
		reason := strings.TrimSpace(res.Reason)
		if reason == "" {
			reason = "no reason given"
		}
		c.early = "Tool failed: blocked by a hook: " + reason
		t.audit(c, "deny", "hook")
		return res.Decision
	}
	if len(res.UpdatedInput) > 0 {
		if err := t.tools.Validate(c.Name, res.UpdatedInput); err != nil {
			c.early = "Tool failed: a hook rewrote the arguments into invalid ones: " + err.Error()
			return hooks.None
		}
		c.args = res.UpdatedInput
		c.Arguments = string(res.UpdatedInput)
		c.summary = c.tool.Summary(c.args)
	}
	if res.AdditionalContext != "" {
		c.context = res.AdditionalContext
	}
	return res.Decision
}

// postToolUse runs the PostToolUse hooks of a finished call and adds what
// they say for the model to its result.
func (t *turn) postToolUse(c *call, o outcome) outcome {
	if t.hooks == nil {
		return o
	}
	resp, _ := json.Marshal(map[string]any{"content": o.content, "isError": o.isError})
	res := t.runHooks(hooks.Event{Name: hooks.PostToolUse, ToolName: c.Name, ToolInput: c.args, ToolResponse: resp})
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

// combineHook folds a PreToolUse hook decision into the policy's.
func combineHook(d permission.Decision, h hooks.Decision) permission.Decision {
	if h == hooks.None {
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

// userPromptSubmit runs the UserPromptSubmit hooks: a block stops the
// turn; additional context is added to the prompt the model sees.
func (t *turn) userPromptSubmit(input string) (string, error) {
	res := t.runHooks(hooks.Event{Name: hooks.UserPromptSubmit, Prompt: input})
	if res.Blocked() {
		return "", fmt.Errorf("prompt blocked by a UserPromptSubmit hook: %s", strings.TrimSpace(res.Reason))
	}
	if res.AdditionalContext != "" {
		input += "\n\n" + res.AdditionalContext
	}
	return input, nil
}
