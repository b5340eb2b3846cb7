package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateTo migrates the schema dsn names up to version only, as an older
// mx-claw would have left it.
func MigrateTo(ctx context.Context, dsn string, version int) error {
	all, err := loadMigrations()
	if err != nil {
		return err
	}
	if version > len(all) {
		return fmt.Errorf("no migration %d", version)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	s := &Store{pool: pool, redacted: Redact(dsn)}
	return s.applyMigrations(ctx, all[:version])
}
