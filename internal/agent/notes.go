package agent

import (
	"context"
	"strings"

	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// The tags around the environment block of a system prompt and around a
// note that updates it.
const (
	envOpen     = "<environment>"
	envClose    = "</environment>"
	updateOpen  = "<environment-update>"
	updateClose = "</environment-update>"
)

// environment returns the environment of a turn (or of a preview) as of
// now, without the facts of the session's start that take time to learn:
// the system and the git status.
func (c *Core) environment(ctx context.Context, ws *tools.Workspace, sess *protocol.Session, model string,
	policy *permission.Policy, onAsk AskPolicy) *Environment {
	e := &Environment{Workspace: ws.Root(), ExtraRoots: ws.Allowed(), Date: c.opts.Now(), Mode: permission.ModeBypass,
		Approvals: onAsk, Sandbox: Sandbox{Mode: SandboxNone}, Model: model}
	// A turn without a policy runs every call: that is bypass.
	if policy != nil {
		e.Mode = policy.Mode()
	}
	if c.opts.Sandbox != nil {
		e.Sandbox = c.opts.Sandbox(ctx, sess)
	}
	if c.opts.Catalog != nil {
		m := c.opts.Catalog(model)
		e.ContextWindow, e.WindowAssumed = m.ContextWindow, !m.Known && !m.Overridden
	}
	return e
}

// environment returns the whole environment of a new session's first
// turn, for its system prompt.
func (t *turn) environment() *Environment {
	e := t.core.environment(t.ctx, t.ws, t.sess, t.model.ID, t.policy, t.onAsk)
	e.System = systemName()
	if t.git != nil {
		e.Git = t.git()
	} else {
		e.Git = probeGit(t.ctx, t.ws.Root())
	}
	return e
}

// toldFacts returns the fact lines the model's view of a session last
// told it, by name ("Date", "Permission mode", …): those of the system
// prompt's environment block, replaced by those of every later note the
// view still holds (a compaction summary stands for the messages up to
// upTo, notes among them included). ok is false when the session's prompt
// has no environment block (a prompt given by the embedder): such a
// session gets no notes.
func toldFacts(history []protocol.Message, upTo int64) (told map[string]string, ok bool) {
	if len(history) == 0 || history[0].Role != protocol.RoleSystem {
		return nil, false
	}
	block, ok := between(history[0].Content, envOpen, envClose)
	if !ok {
		return nil, false
	}
	told = make(map[string]string)
	remember := func(block string) {
		for _, l := range strings.Split(block, "\n") {
			if name := factName(l); name != "" {
				told[name] = l
			}
		}
	}
	remember(block)
	for i := 1; i < len(history); i++ {
		m := &history[i]
		if m.Role != protocol.RoleSystem || m.Seq <= upTo || !strings.HasPrefix(m.Content, updateOpen) {
			continue
		}
		if block, ok := between(m.Content, updateOpen, updateClose); ok {
			remember(block)
		}
	}
	return told, true
}

// between returns the text between the first open tag and the close tag
// after it.
func between(s, open, close string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(rest, close)
	return inner, ok
}

// factName returns NAME of a fact line "- NAME: …", or "".
func factName(line string) string {
	rest, ok := strings.CutPrefix(line, "- ")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, ":")
	if !ok || name == "" || strings.ContainsAny(name, "`*") {
		return ""
	}
	return name
}

// environmentNote returns the note for the fact lines of current that
// differ from what the model was told, or "" if none does.
func environmentNote(told map[string]string, current []string) string {
	var changed []string
	for _, l := range current {
		if told[factName(l)] != l {
			changed = append(changed, l)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	return execLine("update", changed)
}

// environmentNote returns the note a turn adds before its user message
// when the environment changed since the model was last told (the
// permission mode, the approvals, the sandbox, the model or the date), or
// "" when nothing did.
func (t *turn) environmentNote() string {
	var upTo int64
	if r := t.latest(); r != nil {
		upTo = r.UpToSeq
	}
	told, ok := toldFacts(t.history, upTo)
	if !ok {
		return ""
	}
	e := t.core.environment(t.ctx, t.ws, t.sess, t.model.ID, t.policy, t.onAsk)
	return environmentNote(told, e.facts())
}
