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
// workspace is trusted) and the stored grants for the session and the
// workspace. A malformed settings file is an error naming it: the turn
// does not start with rules silently ignored.
func (a *App) policy(ctx context.Context, sess *protocol.Session) (*permission.Policy, error) {
	trusted, err := a.Trusted(ctx, sess.Workspace)
	if err != nil {
		return nil, err
	}
	user, project, err := a.settings(sess.Workspace, trusted)
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
	mode := a.opts.Mode
	if m, ok := a.sessionModes.Load(sess.ID); ok {
		mode = m.(permission.Mode)
	}
	p, err := permission.NewPolicy(permission.Options{Mode: mode, User: user, Project: project,
		ClaudeProject: claude, ProjectTrusted: trusted, Grants: grants, AppHome: a.Home})
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
