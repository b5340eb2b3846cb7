package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mx-claw/mx-claw/internal/store"
)

const qCheckLease = `SELECT mx_claw_check_lease($1, $2, $3::timestamptz)`

// write runs one statement and hands its rows, if any, to read (which may
// be nil). Unfenced, the statement runs on its own; under a lease
// (store.WithLease) it runs in a transaction that checks the lease first,
// all in one round trip: BEGIN, the check, the statement, COMMIT. A failed
// check aborts the transaction, so the statement changes nothing.
func (s *Store) write(ctx context.Context, q string, args []any, read func(pgx.Rows) error) (pgconn.CommandTag, error) {
	fc, fenced := store.FenceOf(ctx)
	if !fenced {
		rows, err := s.pool.Query(ctx, q, args...)
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		return readRows(rows, read)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(qCheckLease, fc.SessionID, fc.Owner, s.clockArg())
	b.Queue(q, args...)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	tag, err := func() (pgconn.CommandTag, error) {
		if _, err := br.Exec(); err != nil {
			return pgconn.CommandTag{}, err
		}
		if _, err := br.Exec(); err != nil {
			return pgconn.CommandTag{}, leaseError(fc.SessionID, err)
		}
		rows, err := br.Query()
		if err != nil {
			return pgconn.CommandTag{}, err
		}
		tag, err := readRows(rows, read)
		if err != nil {
			return tag, err
		}
		return tag, commitTag(br.Exec())
	}()
	err = errors.Join(err, br.Close())
	endTx(ctx, conn)
	return tag, err
}

// readRows reads rows through read and returns their command tag.
func readRows(rows pgx.Rows, read func(pgx.Rows) error) (pgconn.CommandTag, error) {
	defer rows.Close()
	if read != nil {
		if err := read(rows); err != nil {
			return pgconn.CommandTag{}, err
		}
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.CommandTag(), rows.Err()
}

// commitTag checks the result of a COMMIT: an aborted transaction commits
// as ROLLBACK, without an error of its own.
func commitTag(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("commit: the transaction was rolled back (%s)", tag)
	}
	return nil
}

// endTx rolls back what a failed pipeline left open, so the connection
// goes back to the pool outside a transaction (the pool would drop it
// otherwise).
func endTx(ctx context.Context, conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
	}
}
