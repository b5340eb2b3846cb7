package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// openTest opens a store in a fresh temporary directory and closes it when
// the test ends.
func openTest(t testing.TB, opts ...Option) *SQLite {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "mx-claw.db"), opts...)
}

func openAt(t testing.TB, path string, opts ...Option) *SQLite {
	t.Helper()
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newSession creates a session with the given id.
func newSession(t testing.TB, s Store, id string) *protocol.Session {
	t.Helper()
	sess := &protocol.Session{ID: id, Title: "t " + id, Workspace: "/w", Model: "p/m"}
	if err := s.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return sess
}

func TestMigrationsNumbered(t *testing.T) {
	t.Parallel()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].name != "0001_init.sql" {
		t.Fatalf("migrations = %v", ms)
	}
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "home", "deeper")
	path := filepath.Join(dir, "mx-claw.db")
	s := openAt(t, path)
	newSession(t, s, "s1") // make SQLite write the -wal file too
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	var mode string
	if err := s.r.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mx-claw.db")
	ctx := context.Background()
	for i := range 3 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open #%d: %v", i, err)
		}
		if i == 0 {
			newSession(t, s, "kept")
		}
		var v int
		all, _ := loadMigrations()
		if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(all) {
			t.Errorf("open #%d: user_version = %d, %v", i, v, err)
		}
		if _, err := s.GetSession(ctx, "kept"); err != nil {
			t.Errorf("open #%d: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenNewerSchemaLeavesFileAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"wal", "rollback-journal"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "mx-claw.db")
			if name == "wal" {
				s, err := Open(ctx, path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.w.Exec("PRAGMA user_version = 99"); err != nil {
					t.Fatal(err)
				}
				s.Close()
			} else {
				// A database in the default journal mode: Open must not
				// even switch it to WAL.
				db, err := sql.Open("sqlite", path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec("CREATE TABLE future (x); PRAGMA user_version = 99"); err != nil {
					t.Fatal(err)
				}
				db.Close()
			}
			before := readFile(t, path)
			_, err := Open(ctx, path)
			var tooNew *SchemaTooNewError
			all, _ := loadMigrations()
			if !errors.As(err, &tooNew) || tooNew.Version != 99 || tooNew.Supported != len(all) {
				t.Fatalf("Open = %v, want *SchemaTooNewError{99, %d}", err, len(all))
			}
			want := fmt.Sprintf("database %s has schema version 99, newer than this mx-claw supports (%d); upgrade mx-claw", path, len(all))
			if err.Error() != want {
				t.Errorf("error = %q\nwant    %q", err, want)
			}
			if !bytes.Equal(readFile(t, path), before) {
				t.Error("Open changed the file")
			}
		})
	}
}

func TestOpenGarbageLeavesFileAlone(t *testing.T) {
	t.Parallel()
	for name, content := range map[string][]byte{
		"text":         []byte(strings.Repeat("this is not a database\n", 200)),
		"short":        []byte("hello"),
		"bad-sqlite-1": append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 4000)...),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "mx-claw.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(context.Background(), path)
			if !errors.Is(err, ErrNotDatabase) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open = %v, want ErrNotDatabase naming %s", err, path)
			}
			if !bytes.Equal(readFile(t, path), content) {
				t.Error("Open changed the file")
			}
		})
	}
}

func TestOpenDirectoryFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Open(context.Background(), dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open(dir) = %v, want an error naming %s", err, dir)
	}
}

func TestOpenOddPath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag%20", "my db.sqlite")
	s := openAt(t, path)
	newSession(t, s, "s")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %s: %v", path, err)
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
