package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/postgres"
)

// StoreEnv is the environment variable that chooses the session store in
// place of the config's "store": "sqlite" or a postgres:// URL (which may
// hold the password: it is never written to a file, a log or a child's
// environment).
const StoreEnv = "MX_CLAW_STORE"

// StoreChoice is the session store a process uses.
type StoreChoice struct {
	// Postgres is the database's URL; empty for SQLite.
	Postgres string
	// Path is the SQLite database file, for SQLite.
	Path string
	// From says who chose it: StoreEnv, "config" or "default".
	From string
}

// String describes the store for people, without a password:
// "SQLite /home/u/.mx-claw/mx-claw.db" or "PostgreSQL postgres://u:xxxxx@db/mx (MX_CLAW_STORE)".
func (c StoreChoice) String() string {
	if c.Postgres != "" {
		return fmt.Sprintf("PostgreSQL %s (%s)", postgres.Redact(c.Postgres), c.From)
	}
	if c.From != "default" {
		return fmt.Sprintf("SQLite %s (%s)", c.Path, c.From)
	}
	return "SQLite " + c.Path
}

// ChooseStore returns the store of this process: MX_CLAW_STORE if set,
// else the config's "store", else SQLite in the home.
func ChooseStore(home string, cfg *config.Config) (StoreChoice, error) {
	c := StoreChoice{Path: filepath.Join(home, DBFileName), From: "default"}
	v := ""
	if cfg != nil && cfg.Store != "" {
		v, c.From = cfg.Store, "config"
	}
	if env := os.Getenv(StoreEnv); env != "" {
		if err := config.CheckStore(env, true); err != nil {
			return c, &agent.ConfigError{Err: fmt.Errorf("%s: %w", StoreEnv, err)}
		}
		v, c.From = env, StoreEnv
	}
	if v != config.StoreSQLite && v != "" {
		c.Postgres, c.Path = v, ""
	}
	return c, nil
}

// Open opens the store c names.
func (c StoreChoice) Open(ctx context.Context) (store.Store, error) {
	if c.Postgres != "" {
		return postgres.Open(ctx, c.Postgres)
	}
	return store.Open(ctx, c.Path)
}
