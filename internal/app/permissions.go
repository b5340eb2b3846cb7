package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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
// the settings'), user, project (and, trusted, Claude Code's) and local
// settings, and grants. trust treats the workspace as trusted without
// remembering it.
func (a *App) WorkspacePolicy(ctx context.Context, workspace, sessionID string, mode permission.Mode, trust bool) (*permission.Policy, error) {
	trusted, err := a.Trusted(ctx, workspace)
	if err != nil {
		return nil, err
	}
	trusted = trusted || trust
	user, project, err := a.settings(workspace, trusted)
	if err != nil {
		return nil, err
	}
	var claude []*permission.Settings
	if trusted {
		if claude, err = a.claudeProject(workspace); err != nil {
			return nil, err
		}
	}
	local, granted, err := a.localGrants(ctx, workspace, trusted)
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
		ClaudeProject: claude, ProjectTrusted: trusted, Grants: grants, AppHome: a.Home, Local: local,
		LocalGranted: func(rule string) bool { return granted[rule] }})
	if err != nil {
		return nil, fmt.Errorf("permission policy: %w", err)
	}
	return p, nil
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
	trusted, err := a.Trusted(ctx, sess.Workspace)
	if err != nil {
		return nil, err
	}
	user, project, err := a.settings(sess.Workspace, trusted)
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
	if trusted {
		claude, err := a.claudeProject(sess.Workspace)
		if err != nil {
			return nil, err
		}
		// Claude Code's shared file before its local one.
		for _, s := range []*permission.Settings{project, claude[1], claude[0]} {
			raw, ok := s.Other["hooks"]
			if !ok {
				continue
			}
			c, err := hooks.ParseConfig(raw, s.Path)
			if err != nil {
				return nil, err
			}
			configs = append(configs, c)
		}
	}
	// Enabled plugins' hooks (extensions.go) come last.
	plugin, err := a.pluginHooks()
	if err != nil {
		return nil, err
	}
	configs = append(configs, plugin...)
	if len(configs) == 0 {
		return nil, nil
	}
	return &hooks.Runner{Config: hooks.Merge(configs...), DataDir: a.hookDataDir()}, nil
}

// settings loads the user's and the workspace's settings files. Both the
// permission policy and the hooks of a turn come from them, so they are
// read once per file version: a file is read again only when its size or
// modification time changed (for the project's, those of the file and of
// .mx-claw themselves, not of what a link there points to, so a link
// swapped in is seen). A project's settings are parsed in full only once
// it is trusted (see permission.LoadProjectSettings).
func (a *App) settings(workspace string, trusted bool) (user, project *permission.Settings, err error) {
	userPath := permission.UserSettingsPath(a.Home)
	user, err = a.cachedLoad(userPath, fileKey(os.Stat, userPath), func() (*permission.Settings, error) {
		return permission.LoadSettings(userPath)
	})
	if err != nil {
		return nil, nil, err
	}
	projectPath := permission.ProjectSettingsPath(workspace)
	key := fileKey(os.Lstat, projectPath) + fileKey(os.Lstat, filepath.Dir(projectPath)) + fmt.Sprint(trusted)
	project, err = a.cachedLoad(projectPath, key, func() (*permission.Settings, error) {
		return permission.LoadProjectSettings(workspace, trusted)
	})
	if err != nil {
		return nil, nil, err
	}
	return user, project, nil
}

// cachedSettings is a settings file as last read.
type cachedSettings struct {
	key      string
	settings *permission.Settings
}

// fileKey describes the version of the file at path as stat sees it:
// type, size and modification time, or "-" if it cannot be seen.
func fileKey(stat func(string) (os.FileInfo, error), path string) string {
	fi, err := stat(path)
	if err != nil {
		return "-;"
	}
	return fmt.Sprintf("%v,%d,%d;", fi.Mode().Type(), fi.Size(), fi.ModTime().UnixNano())
}

// cachedLoad returns the settings at path from the cache when key is the
// one they were read under, else loads them with load and remembers them.
func (a *App) cachedLoad(path, key string, load func() (*permission.Settings, error)) (*permission.Settings, error) {
	a.mu.Lock()
	c, ok := a.settingsCache[path]
	a.mu.Unlock()
	if ok && c.key == key {
		return c.settings, nil
	}
	s, err := load()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.settingsCache == nil {
		a.settingsCache = make(map[string]cachedSettings)
	}
	a.settingsCache[path] = cachedSettings{key: key, settings: s}
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
