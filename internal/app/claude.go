package app

import (
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/permission"
)

// claudeProject loads the workspace's Claude Code settings files
// (.claude/settings.local.json, then .claude/settings.json) through the
// same cached loader as mx-claw's own, for a workspace the user trusts:
// their permission rules and hooks then apply as the project's do. A
// missing file gives empty settings.
func (a *App) claudeProject(workspace string) ([]*permission.Settings, error) {
	var out []*permission.Settings
	for _, p := range permission.ClaudeProjectSettingsPaths(workspace) {
		s, err := a.loadSettings(p)
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
