package app

import (
	"context"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/store"
)

// OpenStore opens the session store of the home directory home, where and
// as the app opens it. Commands that only read or change stored sessions
// (sessions, permissions audit, the model commands of a session) use it
// instead of a whole App; no other package opens the store itself, so the
// database's place and the way it is opened are decided here alone
// (layering_test.go checks the CLI).
func OpenStore(ctx context.Context, home string) (store.Store, error) {
	return store.Open(ctx, filepath.Join(home, DBFileName))
}
