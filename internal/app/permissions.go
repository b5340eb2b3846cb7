package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// policy builds the permission policy of a session's turn: the mode, the
// user's settings, the project's settings (loosening only once the
// workspace is trusted) and the stored grants for the session and the
// workspace. A malformed settings file is an error naming it: the turn
// does not start with rules silently ignored.
func (a *App) policy(ctx context.Context, sess *protocol.Session) (*permission.Policy, error) {
	user, project, err := a.settings(sess.Workspace)
	if err != nil {
		return nil, err
	}
	trusted, err := a.Trusted(ctx, sess.Workspace)
	if err != nil {
		return nil, err
	}
	var claude []*permission.Settings
	if trusted {
		if claude, err = a.claudeProject(sess.Workspace); err != nil {
			return nil, err
		}
	}
	stored, err := a.Store.Grants(ctx, "session:"+sess.ID, sess.Workspace)
	if err != nil {
		return nil, err
	}
	grants := make([]permission.Grant, len(stored))
	for i, g := range stored {
		origin := "project grant"
		if g.Scope != sess.Workspace {
			origin = "session grant"
		}
		grants[i] = permission.Grant{Rule: g.Rule, Origin: origin}
	}
	p, err := permission.NewPolicy(permission.Options{Mode: a.opts.Mode, User: user, Project: project,
		ClaudeProject: claude, ProjectTrusted: trusted, Grants: grants})
	if err != nil {
		return nil, fmt.Errorf("permission policy: %w", err)
	}
	return p, nil
}

// Trusted reports whether the workspace's own settings and hooks may apply:
// the user trusted it before, or trusts it now with --trust (which is
// remembered).
func (a *App) Trusted(ctx context.Context, workspace string) (bool, error) {
	if a.opts.Trust {
		if err := a.Store.SetTrusted(ctx, workspace); err != nil {
			return false, err
		}
		return true, nil
	}
	return a.Store.Trusted(ctx, workspace)
}

// UserHome returns the user's real home directory (not MX_CLAW_HOME), for
// "~" in permission rules and commands; "" if unknown.
func UserHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(h); err == nil {
		return real
	}
	return h
}

// hookRunner returns the hooks of a session's turn: the user's settings'
// "hooks", then the project's — .mx-claw/settings.json, then Claude Code's
// .claude/settings.json and .claude/settings.local.json — only once the
// workspace is trusted, since a cloned repository must not run commands
// on its own say-so.
func (a *App) hookRunner(ctx context.Context, sess *protocol.Session) (*hooks.Runner, error) {
	var configs []*hooks.Config
	user, project, err := a.settings(sess.Workspace)
	if err != nil {
		return nil, err
	}
	files := []*permission.Settings{user}
	trusted := false
	if _, ok := project.Other["hooks"]; ok || claudeFilesExist(sess.Workspace) {
		if trusted, err = a.Trusted(ctx, sess.Workspace); err != nil {
			return nil, err
		}
	}
	if trusted {
		claude, err := a.claudeProject(sess.Workspace)
		if err != nil {
			return nil, err
		}
		// Claude Code's shared file before its local one.
		files = append(files, project, claude[1], claude[0])
	}
	for _, f := range files {
		raw, ok := f.Other["hooks"]
		if !ok {
			continue
		}
		c, err := hooks.ParseConfig(raw, f.Path)
		if err != nil {
			return nil, err
		}
		configs = append(configs, c)
	}
	if len(configs) == 0 {
		return nil, nil
	}
	return &hooks.Runner{Config: hooks.Merge(configs...), DataDir: a.hookDataDir()}, nil
}

// claudeFilesExist reports whether the workspace has a Claude Code
// settings file.
func claudeFilesExist(workspace string) bool {
	for _, p := range permission.ClaudeProjectSettingsPaths(workspace) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// settings loads the user's and the workspace's settings files. Both the
// permission policy and the hooks of a turn come from them, so they are
// read once per file version: a file is read again only when its size or
// modification time changed.
func (a *App) settings(workspace string) (user, project *permission.Settings, err error) {
	if user, err = a.loadSettings(permission.UserSettingsPath(a.Home)); err != nil {
		return nil, nil, err
	}
	if project, err = a.loadSettings(permission.ProjectSettingsPath(workspace)); err != nil {
		return nil, nil, err
	}
	return user, project, nil
}

// cachedSettings is a settings file as last read.
type cachedSettings struct {
	modTime  time.Time
	size     int64
	exists   bool
	settings *permission.Settings
}

func (a *App) loadSettings(path string) (*permission.Settings, error) {
	var key cachedSettings
	if fi, err := os.Stat(path); err == nil {
		key = cachedSettings{modTime: fi.ModTime(), size: fi.Size(), exists: true}
	}
	a.mu.Lock()
	c, ok := a.settingsCache[path]
	a.mu.Unlock()
	if ok && c.exists == key.exists && c.size == key.size && c.modTime.Equal(key.modTime) {
		return c.settings, nil
	}
	s, err := permission.LoadSettings(path)
	if err != nil {
		return nil, err
	}
	key.settings = s
	a.mu.Lock()
	if a.settingsCache == nil {
		a.settingsCache = make(map[string]cachedSettings)
	}
	a.settingsCache[path] = key
	a.mu.Unlock()
	return s, nil
}
