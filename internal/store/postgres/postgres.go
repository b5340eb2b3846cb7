package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mx-claw/mx-claw/internal/store"
)

var (
	_ store.Store         = (*Store)(nil)
	_ store.EventNotifier = (*Store)(nil)
)

// DefaultMaxConns is the size of the connection pool unless the URL says
// otherwise (pool_max_conns=N).
const DefaultMaxConns = 16

// Store is the store.Store kept in a PostgreSQL database. It is safe for
// concurrent use, and any number of Stores, in any number of processes on
// any number of hosts, may share one database.
type Store struct {
	pool     *pgxpool.Pool
	connCfg  *pgx.ConnConfig // for the LISTEN connection
	redacted string          // the URL without its password
	schema   string
	channel  string // the NOTIFY channel of this schema

	now      func() time.Time
	clocked  bool // now was given: lease expiry follows it too
	alive    func(pid int) bool
	hostname string
	bootID   string

	watch     watch
	closeOnce sync.Once
}

// Option configures Open.
type Option func(*Store)

// WithClock makes the store read the time from now instead of time.Now,
// for the records it stamps and also for lease expiry (otherwise judged by
// the database's clock). Tests use it to move time.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now, s.clocked = now, true }
}

// WithProcessAlive replaces the check AcquireLease makes before it takes
// over the lease of an owner of this host and boot: alive reports whether
// the process with that pid still runs.
func WithProcessAlive(alive func(pid int) bool) Option {
	return func(s *Store) { s.alive = alive }
}

// IsURL reports whether dsn names a PostgreSQL database (a postgres:// or
// postgresql:// URL).
func IsURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Redact returns the URL with its password, if any, replaced by "xxxxx",
// for messages and `mx-claw doctor`.
func Redact(dsn string) string {
	if !IsURL(dsn) {
		return "(not a postgres:// URL)"
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(a URL that does not parse)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Open connects to the database the URL names and migrates its schema to
// the version this binary knows. A schema newer than that fails with
// *store.SchemaTooNewError and is left alone.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	redacted := Redact(dsn)
	if !IsURL(dsn) {
		return nil, fmt.Errorf("open store %s: not a postgres:// URL", redacted)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors may quote the string: say only what it is.
		return nil, fmt.Errorf("open store %s: the URL does not parse", redacted)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = 5 * time.Minute
	s := &Store{
		connCfg:  cfg.ConnConfig.Copy(),
		redacted: redacted,
		now:      time.Now,
		alive:    store.ProcessAlive,
		hostname: store.Hostname(),
		bootID:   bootID(),
	}
	for _, o := range opts {
		o(s)
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redacted, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// String names the store for people: its URL without the password.
func (s *Store) String() string { return s.redacted }

// Schema is the schema the store's tables are in.
func (s *Store) Schema() string { return s.schema }

// Close stops listening and closes the connections.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.watch.close()
		s.pool.Close()
	})
	return nil
}

// bootID returns the kernel's boot id, which changes at every boot of the
// host ("" where there is none).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in order, numbered 1, 2,
// 3, ...
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	out := make([]migration, 0, len(names))
	for _, n := range names {
		base := path.Base(n)
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: no version number", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// migrate applies the migrations the schema lacks in one transaction,
// holding an advisory lock of the schema, so that workers starting
// together migrate it once. The versions applied are rows of
// mx_claw_migrations.
func (s *Store) migrate(ctx context.Context) error {
	all, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.redacted, err)
	}
	return s.applyMigrations(ctx, all)
}

// applyMigrations applies those of all the schema lacks (see migrate).
func (s *Store) applyMigrations(ctx context.Context, all []migration) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.redacted, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var schema *string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("open store %s: %w", s.redacted, err)
	}
	if schema == nil {
		return fmt.Errorf("open store %s: its search_path names no schema that exists; create the schema first", s.redacted)
	}
	s.schema = *schema
	s.channel = "mx_claw_events"
	if s.schema != "public" {
		s.channel += "." + s.schema
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.mx_claw_migrations'))`); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.redacted, err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mx_claw_migrations (
version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.redacted, err)
	}
	var version int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM mx_claw_migrations`).Scan(&version); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.redacted, err)
	}
	if version > len(all) {
		return &store.SchemaTooNewError{Path: s.redacted, Version: version, Supported: len(all)}
	}
	for _, m := range all[version:] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate store %s: %s: %w", s.redacted, m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mx_claw_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return fmt.Errorf("migrate store %s: %w", s.redacted, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.redacted, err)
	}
	return nil
}

// stamp returns t as the store keeps it: UTC, to the millisecond; a zero t
// becomes now.
func (s *Store) stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = s.now()
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// clockArg is the "now" argument of the statements that judge lease
// expiry: nil (the database's clock) unless a clock was given.
func (s *Store) clockArg() any {
	if !s.clocked {
		return nil
	}
	return s.stamp(s.now())
}

// The SQLSTATEs mx_claw_check_lease raises.
const (
	codeNoLease  = "MXL01"
	codeTakenBy  = "MXL02"
	codeExpired  = "MXL03"
	codeFKey     = "23503"
	codeNoSchema = "3F000"
)

// leaseError turns the fencing check's error into one wrapping
// store.ErrLeaseLost; other errors are returned as they are.
func leaseError(sessionID string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeNoLease, codeTakenBy, codeExpired:
			return fmt.Errorf("session %s: %s: %w", sessionID, pe.Message, store.ErrLeaseLost)
		}
	}
	return err
}

// fenceError is leaseError for a write whose fence ctx names.
func fenceError(ctx context.Context, err error) error {
	if fc, ok := store.FenceOf(ctx); ok {
		return leaseError(fc.SessionID, err)
	}
	return err
}

// isForeignKey reports whether err is a failed foreign key: a row naming a
// session that does not exist.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeFKey
}

// sessionError wraps err, met by op on session id: a lost lease wraps
// store.ErrLeaseLost, a missing session store.ErrNotFound.
func sessionError(op, id string, err error) error {
	if err2 := leaseError(id, err); err2 != err {
		return fmt.Errorf("%s: %w", op, err2)
	}
	if isForeignKey(err) || errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: session %s: %w", op, id, store.ErrNotFound)
	}
	return fmt.Errorf("%s: session %s: %w", op, id, err)
}
