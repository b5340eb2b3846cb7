package agent

import (
	"context"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// PromptPreview is what the first request of a new session would carry
// before the user's message: its system messages and its tools.
type PromptPreview struct {
	// Prompt is the system prompt in its parts (memory and skill index
	// included); SystemPrompt is the first system message (Prompt.Text(),
	// or the embedder's prompt). What
	// SessionStart hooks would add is not in it: a preview runs no hooks.
	Prompt       Prompt
	SystemPrompt string
	// Context is the second system message: the AGENTS.md files, merged;
	// empty if there are none.
	Context string
	// Warnings are the problems met reading the context files.
	Warnings []string
	// Tools are the tool schemas sent with every request.
	Tools []llm.Tool
}

// PreviewPrompt builds what a new session in workspace on model
// ("provider/model") would send first, with its environment as of now
// and the permission policy, sandbox and context files that apply to it.
// onAsk is how the session's turns would treat calls that need approval;
// firstMessage, the session's first message, ranks the skills when there
// are more than the index lists. It starts nothing and stores nothing.
func (c *Core) PreviewPrompt(ctx context.Context, workspace, model string, onAsk AskPolicy, firstMessage string) (*PromptPreview, error) {
	ws, err := tools.NewWorkspace(workspace)
	if err != nil {
		return nil, &ConfigError{Err: fmt.Errorf("workspace: %w", err)}
	}
	sess := &protocol.Session{Workspace: ws.Root(), Model: model}
	var policy *permission.Policy
	if c.opts.Permissions != nil {
		if policy, err = c.opts.Permissions(ctx, sess); err != nil {
			return nil, &ConfigError{Err: err}
		}
	}
	reg := c.opts.Tools
	var subWarnings []string
	if c.opts.Subagents != nil {
		// A new session's task tool, as sessionTools adds it.
		defs, w := c.opts.Subagents(ctx, sess)
		subWarnings = w
		if r, err := reg.With(newTaskTool(defs, c.opts.Worktrees != "")); err == nil {
			reg = r
		}
	}
	p := &PromptPreview{SystemPrompt: c.opts.SystemPrompt}
	var sc *SessionContext
	if c.opts.SessionContext != nil {
		v := c.opts.SessionContext(ctx, sess, firstMessage)
		sc = &v
		p.Warnings = append(p.Warnings, v.Warnings...)
	}
	p.Tools = offeredTools(reg, sc != nil && len(sc.Frozen.Skills) > 0)
	if p.SystemPrompt == "" {
		e := c.environment(ctx, ws, sess, model, policy, onAsk)
		e.System, e.Git = systemName(), probeGit(ctx, ws.Root())
		p.Prompt = BuildPrompt(e).WithContext(sc)
		p.SystemPrompt = p.Prompt.Text()
	} else {
		p.SystemPrompt = withSections(p.SystemPrompt, sc)
	}
	if c.opts.Context != nil {
		text, warnings := c.opts.Context(ws.Root())
		p.Context, p.Warnings = text, append(p.Warnings, warnings...)
	}
	p.Warnings = append(p.Warnings, subWarnings...)
	return p, nil
}
