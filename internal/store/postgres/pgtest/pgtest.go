// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb in a
// temporary directory, a postgres server listening only on a Unix socket in
// that directory, stopped and removed when the tests are done. The server
// is Debian's (or any) PostgreSQL found on PATH or under
// /usr/lib/postgresql/*/bin; where there is none, tests skip with the
// reason.
//
// PostgreSQL refuses to run as root, so as root the cluster runs as the
// "postgres" user (or "nobody"), which owns its directory.
//
// Only tests (and test helpers) import pgtest.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres is returned by Start where no PostgreSQL server binaries
// are installed.
var ErrNoPostgres = errors.New("no PostgreSQL server binaries (initdb, postgres) on PATH or under /usr/lib/postgresql/*/bin; install Debian's postgresql (make test-deps)")

// Port is the port number the clusters use; they listen on no TCP port,
// only on the socket file named after it in their directory.
const Port = 5432

// Options adjust Start.
type Options struct {
	// Durable keeps PostgreSQL's defaults (fsync, synchronous commit);
	// without it the cluster skips fsync, as tests need no durability.
	Durable bool
	// Settings are extra server settings, "name=value".
	Settings []string
}

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	// Dir holds the data directory and the server's socket.
	Dir string
	bin string
	cmd *exec.Cmd
	log *os.File

	exited   chan struct{} // closed when the server has exited
	stopOnce sync.Once
	stopErr  error
	dbs      int
	mu       sync.Mutex
}

// BinDir returns the directory of the PostgreSQL server binaries, or
// ErrNoPostgres.
func BinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The newest version first: 15 before 9.6.
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

func version(binDir string) int {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return int(v * 100)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start initialises a cluster in a new temporary directory and starts its
// server. The caller must Stop it.
func Start(opts Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	// Not under a test's TempDir: its parents are private to this user,
	// and the server may run as another.
	dir, err := os.MkdirTemp("", "mx-claw-pg-")
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	c.log, err = os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{"-D", data, "-k", dir, "-p", strconv.Itoa(Port),
		"-c", "listen_addresses=", "-c", "max_connections=300", "-c", "shared_buffers=64MB"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, s := range opts.Settings {
		args = append(args, "-c", s)
	}
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
	c.cmd.Dir = dir
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.SysProcAttr = serverProcAttr(cred)
	if err := c.cmd.Start(); err != nil {
		c.log.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c.exited = make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(c.exited)
	}()
	if err := c.waitReady(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// serverUser returns the credentials the server runs with: nil (this
// process's) unless this process is root.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and there is no postgres or nobody user to run PostgreSQL as")
}

func (c *Cluster) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		select {
		case <-c.exited:
			return fmt.Errorf("postgres exited: %s", c.logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("postgres not ready after %v: %s", limit, c.logTail())
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// URL returns the connection URL of a database of the cluster, as user
// postgres over the Unix socket.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&port=%d&sslmode=disable", db, c.Dir, Port)
}

// CreateDB creates a new, empty database and returns its URL.
func (c *Cluster) CreateDB(ctx context.Context) (string, error) {
	c.mu.Lock()
	c.dbs++
	name := fmt.Sprintf("db%d", c.dbs)
	c.mu.Unlock()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	return c.URL(name), nil
}

// CreateSchema creates a new, empty schema in the database "postgres" and
// returns a URL whose connections use it (search_path): much cheaper than
// a database, for tests that each want an empty store.
func (c *Cluster) CreateSchema(ctx context.Context) (string, error) {
	c.mu.Lock()
	c.dbs++
	name := fmt.Sprintf("s%d", c.dbs)
	c.mu.Unlock()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", fmt.Errorf("create schema: %w", err)
	}
	return c.URL("postgres") + "&search_path=" + name, nil
}

// Stop stops the server (fast shutdown: open sessions are ended) and
// removes its directory.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		if c.cmd != nil && c.cmd.Process != nil {
			_ = c.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-c.exited:
			case <-time.After(20 * time.Second):
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.exited
			}
		}
		if c.log != nil {
			c.log.Close()
		}
		c.stopErr = os.RemoveAll(c.Dir)
	})
	return c.stopErr
}

// Lazy is a test package's cluster, started on first use and stopped by
// Main. Declare one per package and call its Main from TestMain.
type Lazy struct {
	// Options are those the cluster starts with.
	Options Options

	once sync.Once
	c    *Cluster
	err  error
}

// Get returns the cluster, starting it on first use, or skips t with the
// reason where PostgreSQL is not installed (and fails it if it is but
// will not start).
func (l *Lazy) Get(t testing.TB) *Cluster {
	t.Helper()
	l.once.Do(func() { l.c, l.err = Start(l.Options) })
	switch {
	case errors.Is(l.err, ErrNoPostgres):
		t.Skipf("PostgreSQL tests skipped: %v", l.err)
	case l.err != nil:
		t.Fatalf("start PostgreSQL: %v", l.err)
	}
	return l.c
}

// NewDB returns the URL of a new, empty database of the cluster.
func (l *Lazy) NewDB(t testing.TB) string {
	t.Helper()
	c := l.Get(t)
	url, err := c.CreateDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// NewSchema returns the URL of a new, empty schema of the cluster (see
// Cluster.CreateSchema).
func (l *Lazy) NewSchema(t testing.TB) string {
	t.Helper()
	c := l.Get(t)
	url, err := c.CreateSchema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Main runs the tests and stops the cluster if one was started.
func (l *Lazy) Main(m *testing.M) int {
	code := m.Run()
	l.Stop()
	return code
}

// Stop stops the cluster if one was started; none starts after it.
func (l *Lazy) Stop() {
	l.once.Do(func() {})
	if l.c != nil {
		if err := l.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop:", err)
		}
	}
}
