package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/store"
)

// "Always" approvals are allow rules for a workspace. They are written to
// the workspace's .mx-claw/settings.local.json, where the user can read,
// edit and remove them, and recorded in the store too: in a workspace
// that is not trusted, a rule of that file applies only if the store says
// the user granted it here (a cloned repository cannot grant itself
// anything), and removing it from the file revokes it.

// grantStore is the store the core writes to: a grant for a workspace
// also goes to the workspace's local settings file.
type grantStore struct {
	store.Store
}

// AddGrant writes a workspace grant to settings.local.json, then records
// it; a session grant is only recorded.
func (g grantStore) AddGrant(ctx context.Context, scope, rule string) error {
	if scope != "" && !strings.HasPrefix(scope, "session:") {
		if err := permission.AddLocalAllow(scope, rule); err != nil {
			return fmt.Errorf("save the rule %s: %w", rule, err)
		}
	}
	return g.Store.AddGrant(ctx, scope, rule)
}

// localGrants loads the workspace's local settings and the set of rules
// the user granted for it in mx-claw. A grant missing from the file (the
// user removed it, or it predates the file) does not apply.
func (a *App) localGrants(ctx context.Context, workspace string, trusted bool) (*permission.Settings, map[string]bool, error) {
	stored, err := a.Store.Grants(ctx, workspace)
	if err != nil {
		return nil, nil, err
	}
	granted := make(map[string]bool, len(stored))
	for _, g := range stored {
		granted[g.Rule] = true
	}
	path := permission.LocalSettingsPath(workspace)
	key := fileKey(os.Lstat, path) + fileKey(os.Lstat, filepath.Dir(path)) + fmt.Sprint(trusted)
	local, err := a.cachedLoad(path, key, func() (*permission.Settings, error) {
		return permission.LoadLocalSettings(workspace, trusted)
	})
	if err != nil {
		return nil, nil, err
	}
	return local, granted, nil
}
