package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The session store: "store" is "sqlite" (the default: mx-claw.db in the
// home) or a postgres:// URL, which several mx-claw processes on several
// machines may share; the MX_CLAW_STORE environment variable, if set,
// takes its place. config.json holds no secrets, so a URL with a password
// is refused here: the password belongs in PGPASSWORD, ~/.pgpass, or the
// URL in MX_CLAW_STORE. "leaseTTL" is how long a session's lease lasts
// between heartbeats — how soon another process takes over the sessions of
// one that died on another machine (default 30s).

// StoreSQLite is the store value of the default SQLite store.
const StoreSQLite = "sqlite"

// loadStore checks and takes the store keys of f.
func (c *Config) loadStore(f Config) error {
	if err := CheckStore(f.Store, false); err != nil {
		return fmt.Errorf("config %s: store: %w", c.path, err)
	}
	if f.LeaseTTL != "" {
		if d, err := time.ParseDuration(f.LeaseTTL); err != nil || d < time.Second {
			return fmt.Errorf("config %s: leaseTTL %q is not a duration of at least 1s, like \"30s\"", c.path, f.LeaseTTL)
		}
	}
	c.Store, c.LeaseTTL, c.Server = f.Store, f.LeaseTTL, f.Server
	return nil
}

// CheckStore checks a store value: empty, "sqlite" or a postgres:// URL;
// a password in the URL is allowed only where it is not stored in a file
// (fromEnv).
func CheckStore(v string, fromEnv bool) error {
	if v == "" || v == StoreSQLite {
		return nil
	}
	if !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
		return fmt.Errorf("want %q or a postgres:// URL", StoreSQLite)
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("the postgres:// URL does not parse")
	}
	if _, has := u.User.Password(); (has || u.Query().Has("password")) && !fromEnv {
		return fmt.Errorf("the URL holds a password, and config.json holds no secrets: " +
			"put the password in PGPASSWORD or ~/.pgpass, or the whole URL in MX_CLAW_STORE")
	}
	return nil
}

// LeaseDuration is LeaseTTL as a duration, 0 if unset.
func (c *Config) LeaseDuration() time.Duration {
	d, _ := time.ParseDuration(c.LeaseTTL)
	return d
}
