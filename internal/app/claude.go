package app

import (
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/permission"
)

// claudeProject loads the workspace's Claude Code settings files
// (.claude/settings.local.json, then .claude/settings.json), for a
// workspace the user trusts: their permission rules and hooks then apply
// as the project's do. They are cached like mx-claw's own and read the
// same way (a symbolic link is refused); a missing file gives empty
// settings.
func (a *App) claudeProject(workspace string) ([]*permission.Settings, error) {
	var out []*permission.Settings
	for _, p := range permission.ClaudeProjectSettingsPaths(workspace) {
		key := fileKey(os.Lstat, p) + fileKey(os.Lstat, filepath.Dir(p))
		s, err := a.cachedLoad(p, key, func() (*permission.Settings, error) {
			return permission.LoadClaudeSettings(workspace, filepath.Base(p))
		})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// hookDataDir is where hooks' per-session files live: the transcript
// they are given and their CLAUDE_ENV_FILE.
func (a *App) hookDataDir() string { return filepath.Join(a.Home, "hooks") }
