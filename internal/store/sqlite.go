package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var _ Store = (*SQLite)(nil)

// SQLite is the Store kept in one SQLite database file. It is safe for
// concurrent use by many goroutines, and several SQLite values, in one
// process or in several, may share one file.
//
// Writes go through a pool of one connection whose transactions begin with
// BEGIN IMMEDIATE: writers of this process queue in database/sql, writers of
// other processes queue in SQLite's busy handler (up to busyTimeout), and no
// transaction ever has to upgrade a read lock to a write lock, which is what
// makes SQLite fail with SQLITE_BUSY instead of waiting. Reads use a
// separate pool of read-only connections; in WAL mode they run alongside the
// writer and see every committed write.
type SQLite struct {
	path     string
	w        *sql.DB // one connection, BEGIN IMMEDIATE
	r        *sql.DB // read-only connections
	now      func() time.Time
	alive    func(pid int) bool
	hostname string

	st        stmts
	pollEvery time.Duration
	watch     sqliteWatch
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	closeErr  error
}

// busyTimeout is how long a statement waits for a lock held by another
// connection before it fails with SQLITE_BUSY.
const busyTimeout = 5 * time.Second

// Option configures Open.
type Option func(*SQLite)

// WithClock makes the store read the time from now instead of time.Now. It
// decides lease expiry and stamps records; tests use it to move time.
func WithClock(now func() time.Time) Option {
	return func(s *SQLite) { s.now = now }
}

// WithProcessAlive replaces the check AcquireLease makes before it takes
// over the lease of an owner on this host: alive reports whether the process
// with that pid still runs. The default sends it signal 0.
func WithProcessAlive(alive func(pid int) bool) Option {
	return func(s *SQLite) { s.alive = alive }
}

// Open opens the store at path, creating the file (mode 0600) and its
// directory (mode 0700) if missing, and migrates its schema to the version
// this binary knows.
//
// A database whose schema is newer than this binary's fails with
// *SchemaTooNewError; a file that is not an SQLite database fails with an
// error wrapping ErrNotDatabase. Neither file is modified.
func Open(ctx context.Context, path string, opts ...Option) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &SQLite{
		path:     abs,
		now:      time.Now,
		alive:    processAlive,
		hostname: Hostname(),
		closed:   make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	all, err := loadMigrations()
	if err != nil {
		return nil, err
	}
	if err := createFile(abs); err != nil {
		return nil, err
	}
	if err := s.openPools(ctx, len(all)); err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, all); err != nil {
		s.closeDBs()
		return nil, err
	}
	if err := s.st.prepareWriter(ctx, s.w); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	s.st.startReader(s.r)
	return s, nil
}

// Path returns the absolute path of the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database. Calls after the first return its result.
func (s *SQLite) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.st.close()
		s.closeErr = s.closeDBs()
	})
	return s.closeErr
}

func (s *SQLite) closeDBs() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// createFile creates the database file with mode 0600 if it is missing, so
// that SQLite (which gives its -wal and -shm files the mode of the database)
// never creates anything readable by others.
func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, os.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("open store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	return nil
}

// checkFile checks, on a new writer connection before it changes
// anything (no journal mode set, nothing written), that the file is an
// SQLite database this binary may migrate; then it sets the writer's
// pragmas. It runs as the writer driver's connection hook, so the check
// costs no connection of its own (each one parses the whole schema).
func checkFile(ctx context.Context, c sqlite.ExecQuerierContext, latest int) error {
	var version, n int64
	if err := queryInt(ctx, c, "PRAGMA user_version", &version); err != nil {
		return err
	}
	if version > int64(latest) {
		return &SchemaTooNewError{Version: int(version), Supported: latest}
	}
	// Reading the schema also checks that page 1 is sound.
	if err := queryInt(ctx, c, "SELECT count(*) FROM sqlite_schema", &n); err != nil {
		return err
	}
	for _, p := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=1"} {
		if _, err := c.ExecContext(ctx, p, nil); err != nil {
			return err
		}
	}
	return nil
}

// queryInt reads the one integer q returns on a driver connection.
func queryInt(ctx context.Context, c sqlite.ExecQuerierContext, q string, dst *int64) error {
	rows, err := c.QueryContext(ctx, q, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err != nil {
		return err
	}
	if len(vals) == 0 {
		return fmt.Errorf("%s: no value", q)
	}
	v, ok := vals[0].(int64)
	if !ok {
		return fmt.Errorf("%s: %T, not an integer", q, vals[0])
	}
	*dst = v
	return nil
}

// connector opens connections of one DSN with one driver.
type connector struct {
	drv *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

func (s *SQLite) openPools(ctx context.Context, latest int) error {
	drv := &sqlite.Driver{}
	if err := registerSearchFunction(drv); err != nil {
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	drv.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		// Not Open's ctx: the pool may open a connection again later.
		return checkFile(context.Background(), c, latest)
	})
	w := sql.OpenDB(connector{drv: drv, dsn: dsn(s.path, "_txlock", "immediate")})
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		var tooNew *SchemaTooNewError
		if errors.As(err, &tooNew) {
			tooNew.Path = s.path
			return tooNew
		}
		return openError(s.path, err)
	}

	r, err := sql.Open("sqlite", dsn(s.path,
		"mode", "rw",
		"_pragma", "foreign_keys(1)",
		"_pragma", "query_only(1)",
	))
	if err != nil {
		w.Close()
		return fmt.Errorf("open store %s: %w", s.path, err)
	}
	n := min(max(runtime.GOMAXPROCS(0), 2), 8)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	s.w, s.r = w, r
	return nil
}

// dsn returns the modernc.org/sqlite data source name of the database at
// path with busy_timeout and the given query parameters (key, value pairs).
func dsn(path string, kv ...string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" {
		p = "/" + p // file:/C:/dir/x.db
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
}

// openError turns an error met while opening path into one that names the
// file and, if SQLite found no database there, wraps ErrNotDatabase.
func openError(path string, err error) error {
	if code, ok := sqliteCode(err); ok && (code&0xff == sqlite3.SQLITE_NOTADB || code&0xff == sqlite3.SQLITE_CORRUPT) {
		return fmt.Errorf("open store %s: %w: %w; the file was left as it is: restore it from a backup, or move it away to start with an empty store", path, ErrNotDatabase, err)
	}
	return fmt.Errorf("open store %s: %w", path, err)
}

func sqliteCode(err error) (int, bool) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code(), true
	}
	return 0, false
}

// isForeignKeyError reports whether err is a failed FOREIGN KEY constraint:
// a row naming a session that does not exist.
func isForeignKeyError(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// sessionError wraps err, met by op on session id, turning a missing
// session into ErrNotFound.
func sessionError(op, id string, err error) error {
	if isForeignKeyError(err) || errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: session %s: %w", op, id, ErrNotFound)
	}
	return fmt.Errorf("%s: session %s: %w", op, id, err)
}

// ms is how timestamps are stored: unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS is the inverse of ms, in UTC.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// stamp returns t as it will read back from the store: UTC, to the
// millisecond, without a monotonic reading. A zero t becomes now.
func (s *SQLite) stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = s.now()
	}
	return fromMS(ms(t))
}

// rollback ends tx if Commit was not reached; its error is of no interest
// then, since the operation already failed.
func rollback(tx *sql.Tx) { _ = tx.Rollback() }
