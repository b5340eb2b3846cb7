package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/permission"
)

// PermissionChange changes the user's permission settings; nil fields are
// left as they are, an empty list clears one, an empty mode unsets it.
type PermissionChange struct {
	DefaultMode      *string
	Allow, Ask, Deny *[]string
}

// UserPermissions returns the user's settings ($MX_CLAW_HOME/settings.json).
func (a *App) UserPermissions() (*permission.Settings, error) {
	path := permission.UserSettingsPath(a.Home)
	return a.cachedLoad(path, fileKey(os.Stat, path), func() (*permission.Settings, error) {
		return permission.LoadSettings(path)
	})
}

// UpdateUserPermissions writes ch into the user's settings file, keeping
// every other key (hooks, sandbox, ...) as it was. The new text is parsed
// before it replaces the file (atomically, mode 0600), so an invalid rule
// or mode is an error naming it and nothing is written. Turns started
// afterwards use the new settings.
func (a *App) UpdateUserPermissions(ch PermissionChange) error {
	a.settingsWrite.Lock()
	defer a.settingsWrite.Unlock()
	path := permission.UserSettingsPath(a.Home)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read settings: %w", err)
	}
	top := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &top); err != nil || top == nil {
			// Let the parser say what is wrong with it.
			if _, perr := permission.ParseSettings(path, data); perr != nil {
				return perr
			}
			return fmt.Errorf("settings %s: not a JSON object", path)
		}
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &perms); err != nil || perms == nil {
			return &permission.SettingsError{Path: path, Field: "permissions", Err: errors.New("must be an object")}
		}
	}
	set := func(key string, v any) {
		raw, _ := json.Marshal(v)
		perms[key] = raw
	}
	if m := ch.DefaultMode; m != nil {
		if *m == "" {
			delete(perms, "defaultMode")
		} else {
			set("defaultMode", *m)
		}
	}
	for key, list := range map[string]*[]string{"allow": ch.Allow, "ask": ch.Ask, "deny": ch.Deny} {
		if list == nil {
			continue
		}
		rules := *list
		if rules == nil {
			rules = []string{}
		}
		set(key, rules)
	}
	raw, err := json.Marshal(perms)
	if err != nil {
		return err
	}
	top["permissions"] = raw
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	out = append(out, '\n')
	if _, err := permission.ParseSettings(path, out); err != nil {
		return err
	}
	return writeFileAtomic(path, out)
}

// writeFileAtomic replaces path by data (mode 0600) through a temporary
// file in the same directory, so a reader sees the old file or the new
// one, never half of it.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ConfigSnapshot returns a copy of the config, safe to read while another
// goroutine changes it through UpdateConfig.
func (a *App) ConfigSnapshot() *config.Config {
	a.cfgMu.RLock()
	defer a.cfgMu.RUnlock()
	return a.Config.Clone()
}

// UpdateConfig changes the config as config.Update does, under the lock
// ResolveModel reads it with, so a long-running process (the server) can
// edit it while turns run.
func (a *App) UpdateConfig(change func(*config.Config) error) error {
	a.cfgMu.Lock()
	defer a.cfgMu.Unlock()
	return a.Config.Update(change)
}
