package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrationFS holds the schema migrations, one file per version, named
// NNNN_what.sql. A migration never changes once released; a new schema is a
// new file. The version a database has reached is its PRAGMA user_version,
// written in the same transaction as the migration.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in order, checking that
// they are numbered 1, 2, 3, ... The last one's version is the schema
// version this binary migrates databases to.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	ms := make([]migration, 0, len(names))
	for _, n := range names {
		base := path.Base(n)
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("load migrations: %s: no version number", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("load migrations: %w", err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("load migrations: %s: want version %d", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the schema to latestVersion in one write transaction, so a
// concurrent Open in another process either sees no change or all of it.
func (s *SQLite) migrate(ctx context.Context, all []migration) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return openError(s.path, err)
	}
	defer rollback(tx)
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return openError(s.path, err)
	}
	if version > len(all) {
		return &SchemaTooNewError{Path: s.path, Version: version, Supported: len(all)}
	}
	if version == len(all) {
		return nil
	}
	for _, m := range all[version:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate store %s: %s: %w", s.path, m.name, err)
		}
	}
	// PRAGMA takes no bound parameters; len(all) is ours, not input.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(all))); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate store %s: %w", s.path, err)
	}
	return nil
}
