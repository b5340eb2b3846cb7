package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/lsp"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/subagent"
	"github.com/mx-claw/mx-claw/internal/worktree"
)

// WorktreesDirName is the folder inside the home where writing subagents'
// git worktrees are made (and removed when they finish).
const WorktreesDirName = "worktrees"

// extras are the parts of the wiring read from the user's settings.json
// at start: the language servers ("lsp") and the subagents' limits
// ("subagents"). A malformed entry turns its part off (or to its
// defaults) and is told to each new session.
type extras struct {
	lsp      *lsp.Manager // nil when diagnostics are off
	limits   agent.SubagentLimits
	warnings []string
}

// subagentSettings is the "subagents" object of settings.json.
type subagentSettings struct {
	MaxIterations int    `json:"maxIterations"`
	MaxTokens     int64  `json:"maxTokens"`
	MaxTime       string `json:"maxTime"`
	MaxParallel   int    `json:"maxParallel"`
}

// loadExtras reads the user's settings for the extras.
func loadExtras(home string, opts Options) extras {
	var x extras
	path := permission.UserSettingsPath(home)
	user, err := permission.LoadSettings(path)
	if err != nil {
		// The turn reports a broken settings file; here defaults do.
		user = &permission.Settings{}
	}
	servers, on, ls, err := lsp.ParseSettings(user.Other["lsp"])
	if err != nil {
		x.warnings = append(x.warnings, fmt.Sprintf("%s: %v; language-server diagnostics are off", path, err))
		on = false
	}
	if on {
		x.lsp = lsp.NewManager(lsp.Options{Servers: servers, Timeout: time.Duration(ls.TimeoutSeconds * float64(time.Second)),
			Logger: opts.Logger})
	}
	if raw, ok := user.Other["subagents"]; ok {
		var s subagentSettings
		if err := json.Unmarshal(raw, &s); err != nil {
			x.warnings = append(x.warnings, fmt.Sprintf("%s: subagents: %v; the default limits apply", path, err))
		} else {
			x.limits = agent.SubagentLimits{MaxIterations: s.MaxIterations, MaxTokens: s.MaxTokens, MaxParallel: s.MaxParallel}
			if s.MaxTime != "" {
				d, err := time.ParseDuration(s.MaxTime)
				if err != nil || d <= 0 {
					x.warnings = append(x.warnings, fmt.Sprintf("%s: subagents.maxTime %q is not a duration such as \"10m\"; the default applies", path, s.MaxTime))
				} else {
					x.limits.MaxDuration = d
				}
			}
		}
	}
	return x
}

// subagents is the agent's Subagents: the built-in types and the user's,
// and, in a trusted workspace, the project's.
func (a *App) subagents(ctx context.Context, sess *protocol.Session) ([]subagent.Definition, []string) {
	trusted, err := a.Trusted(ctx, sess.Workspace)
	if err != nil {
		return subagent.BuiltIn(), []string{"subagents: " + err.Error()}
	}
	defs, warnings := subagent.Load(subagent.LoadOptions{Home: a.Home, Workspace: sess.Workspace, Trusted: trusted})
	return defs, append(warnings, a.extras.warnings...)
}

// diagnose is the agent's Diagnose, nil when diagnostics are off.
func (x extras) diagnose() agent.DiagnoseFunc {
	if x.lsp == nil {
		return nil
	}
	return x.lsp.Check
}

// worktreesDir is where subagents' worktrees go.
func worktreesDir(home string) string { return filepath.Join(home, WorktreesDirName) }

// leftOverAge is how old a worktree folder without an ended session must
// be before a new process takes it for one a dead process left.
const leftOverAge = 10 * time.Minute

// recoverWorktrees finishes the worktrees that subagents of dead
// processes left: what they changed is committed on their branches, the
// folders go. A worktree whose session is still running (in another
// process) is left alone. It returns the branches that kept work.
func (a *App) recoverWorktrees(ctx context.Context) []string {
	dir := worktreesDir(a.Home)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var kept []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s, err := a.Store.GetSession(ctx, e.Name())
		ended := err == nil && (s.Status == protocol.StatusFailed || s.Status == protocol.StatusCancelled)
		if !ended {
			// Running, or just being made by another process (the folder
			// comes before its session): only an old one is left over.
			info, err := e.Info()
			if err != nil || (s != nil && s.Status == protocol.StatusRunning) || time.Since(info.ModTime()) < leftOverAge {
				continue
			}
		}
		tree, err := worktree.Open(ctx, path)
		if err != nil {
			a.log().Warn("a subagent's worktree could not be recovered", "dir", path, "err", err)
			continue
		}
		res, err := tree.Finish(ctx, "mx-claw: work of a subagent whose process ended")
		if err != nil {
			a.log().Warn("a subagent's worktree could not be recovered", "dir", path, "err", err)
			continue
		}
		if res.Changed() {
			kept = append(kept, res.Branch)
		}
	}
	return kept
}
