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
// workspace is trusted), its local settings with the "always" grants, and
// the session's grants. A malformed settings file is an error naming it:
// the turn does not start with rules silently ignored.
func (a *App) policy(ctx context.Context, sess *protocol.Session) (*permission.Policy, error) {
	return a.WorkspacePolicy(ctx, sess.Workspace, sess.ID, a.modeFor(sess.ID), false)
}

// WorkspacePolicy builds the permission policy of a workspace as a turn
// of the session (none if sessionID is "") would get it: mode (mode, else
// the settings'), user, project and local settings, and grants. trust
// treats the workspace as trusted without remembering it.
func (a *App) WorkspacePolicy(ctx context.Context, workspace, sessionID string, mode permission.Mode, trust bool) (*permission.Policy, error) {
	user, project, err := a.settings(workspace)
	if err != nil {
		return nil, err
	}
	trusted, err := a.Trusted(ctx, workspace)
	if err != nil {
		return nil, err
	}
	local, granted, err := a.localGrants(ctx, workspace)
	if err != nil {
		return nil, err
	}
	var grants []permission.Grant
	if sessionID != "" {
		stored, err := a.Store.Grants(ctx, "session:"+sessionID)
		if err != nil {
			return nil, err
		}
		for _, g := range stored {
			grants = append(grants, permission.Grant{Rule: g.Rule, Origin: "session grant"})
		}
	}
	p, err := permission.NewPolicy(permission.Options{Mode: mode, User: user, Project: project,
		ProjectTrusted: trusted || trust, Grants: grants, Local: local,
		LocalGranted: func(rule string) bool { return granted[rule] }})
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
// "hooks", then the project's — only once the workspace is trusted, since
// a cloned repository must not run commands on its own say-so.
func (a *App) hookRunner(ctx context.Context, sess *protocol.Session) (*hooks.Runner, error) {
	var configs []*hooks.Config
	user, project, err := a.settings(sess.Workspace)
	if err != nil {
		return nil, err
	}
	if raw, ok := user.Other["hooks"]; ok {
		c, err := hooks.ParseConfig(raw, user.Path)
		if err != nil {
			return nil, err
		}
		configs = append(configs, c)
	}
	if raw, ok := project.Other["hooks"]; ok {
		trusted, err := a.Trusted(ctx, sess.Workspace)
		if err != nil {
			return nil, err
		}
		if trusted {
			c, err := hooks.ParseConfig(raw, project.Path)
			if err != nil {
				return nil, err
			}
			configs = append(configs, c)
		}
	}
	if len(configs) == 0 {
		return nil, nil
	}
	return &hooks.Runner{Config: hooks.Merge(configs...)}, nil
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

// CheckWorkspace reads the settings files that apply in a workspace (the
// user's, the project's and its local ones) and their hooks, as a turn
// would, so that a front end can report a malformed file before it starts
// (and before it creates a session) rather than at the first message.
func (a *App) CheckWorkspace(ctx context.Context, workspace string) error {
	if _, err := a.WorkspacePolicy(ctx, workspace, "", a.opts.Mode, false); err != nil {
		return err
	}
	_, err := a.hookRunner(ctx, &protocol.Session{Workspace: workspace})
	return err
}
