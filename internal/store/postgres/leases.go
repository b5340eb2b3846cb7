package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Lease times come from the database's clock (statement_timestamp()),
// the one clock every host sharing the store agrees on, unless a test
// clock was given ($now); they are kept to the millisecond.
const (
	// qTakeLease grants the lease in one statement, holding the row's
	// lock: if there is none, it has expired, or owner holds it already.
	// It returns no row if another owner holds it.
	qTakeLease = `INSERT INTO leases AS l (session_id, owner, host, pid, boot_id, expires_at, acquired_at)
VALUES ($1, $2, $3, $4, $5,
  date_trunc('milliseconds', COALESCE($6::timestamptz, statement_timestamp())) + $7 * interval '1 millisecond',
  date_trunc('milliseconds', COALESCE($6::timestamptz, statement_timestamp())))
ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid,
  boot_id = excluded.boot_id, expires_at = excluded.expires_at,
  acquired_at = CASE WHEN l.owner = excluded.owner THEN l.acquired_at ELSE excluded.acquired_at END
WHERE l.owner = excluded.owner OR l.expires_at <= COALESCE($6::timestamptz, statement_timestamp())
RETURNING expires_at`
	// qTakeFrom takes the lease from a holder judged gone, if it still
	// holds it.
	qTakeFrom = `UPDATE leases SET owner = $2, host = $3, pid = $4, boot_id = $5,
  expires_at = date_trunc('milliseconds', COALESCE($6::timestamptz, statement_timestamp())) + $7 * interval '1 millisecond',
  acquired_at = date_trunc('milliseconds', COALESCE($6::timestamptz, statement_timestamp()))
WHERE session_id = $1 AND owner = $8
RETURNING expires_at`
	qHolder = `SELECT owner, boot_id, expires_at FROM leases WHERE session_id = $1`
)

// AcquireLease makes owner the writer of the session for ttl (ttl <= 0
// means store.DefaultLeaseTTL): at once if nobody holds the lease, it has
// expired or owner holds it (extending it), in one statement that locks
// the lease row; or if its holder is a process of this host and boot that
// no longer runs, by taking it from that holder. Otherwise it fails with
// *store.LeaseHeldError.
func (s *Store) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error) {
	if owner == "" {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: empty owner", sessionID)
	}
	if ttl <= 0 {
		ttl = store.DefaultLeaseTTL
	}
	host, pid, _ := store.ParseOwner(owner)
	args := []any{sessionID, owner, host, pid, s.bootID, s.clockArg(), ttl.Milliseconds()}
	// A holder judged gone may be replaced meanwhile by a live one, or
	// leave: look again, a few times.
	for range 3 {
		var expires time.Time
		err := s.pool.QueryRow(ctx, qTakeLease, args...).Scan(&expires)
		if err == nil {
			return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires.UTC()}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
		}
		var held, heldBoot string
		var until time.Time
		err = s.pool.QueryRow(ctx, qHolder, sessionID).Scan(&held, &heldBoot, &until)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // released meanwhile
		}
		if err != nil {
			return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
		}
		if !s.holderGone(held, heldBoot) {
			return protocol.Lease{}, &store.LeaseHeldError{SessionID: sessionID, Owner: held, ExpiresAt: until.UTC()}
		}
		err = s.pool.QueryRow(ctx, qTakeFrom, append(args, held)...).Scan(&expires)
		if err == nil {
			return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires.UTC()}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
		}
	}
	l, err := s.GetLease(ctx, sessionID)
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: it keeps changing hands", sessionID)
	}
	return protocol.Lease{}, &store.LeaseHeldError{SessionID: sessionID, Owner: l.Owner, ExpiresAt: l.ExpiresAt}
}

// holderGone reports whether owner, holding a lease taken on the host boot
// heldBoot, is a process of this host and boot that no longer runs. Owners
// it cannot judge (other hosts, another boot, foreign names) are not gone.
func (s *Store) holderGone(owner, heldBoot string) bool {
	host, pid, ok := store.ParseOwner(owner)
	if !ok || host == store.UnknownHost || host != s.hostname || heldBoot != s.bootID {
		return false
	}
	return !s.alive(pid)
}

// RenewLease extends owner's lease to now+ttl. An expired lease nobody
// took over is still owner's and is renewed; a lease someone else holds,
// or none, fails with an error wrapping store.ErrLeaseLost.
func (s *Store) RenewLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error) {
	if ttl <= 0 {
		ttl = store.DefaultLeaseTTL
	}
	var expires time.Time
	err := s.pool.QueryRow(ctx, `UPDATE leases
SET expires_at = date_trunc('milliseconds', COALESCE($3::timestamptz, statement_timestamp())) + $4 * interval '1 millisecond'
WHERE session_id = $1 AND owner = $2 RETURNING expires_at`, sessionID, owner, s.clockArg(), ttl.Milliseconds()).Scan(&expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return protocol.Lease{}, fmt.Errorf("renew lease on session %s as %s: %w", sessionID, owner, store.ErrLeaseLost)
	}
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("renew lease on session %s: %w", sessionID, err)
	}
	return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires.UTC()}, nil
}

// ReleaseLease gives up owner's lease; releasing a lease one does not hold
// is not an error.
func (s *Store) ReleaseLease(ctx context.Context, sessionID, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE session_id = $1 AND owner = $2`, sessionID, owner); err != nil {
		return fmt.Errorf("release lease on session %s: %w", sessionID, err)
	}
	return nil
}

// GetLease returns the session's unexpired lease, or an error wrapping
// store.ErrNotFound.
func (s *Store) GetLease(ctx context.Context, sessionID string) (protocol.Lease, error) {
	var owner string
	var expires time.Time
	err := s.pool.QueryRow(ctx, `SELECT owner, expires_at FROM leases
WHERE session_id = $1 AND expires_at > COALESCE($2::timestamptz, statement_timestamp())`,
		sessionID, s.clockArg()).Scan(&owner, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return protocol.Lease{}, fmt.Errorf("lease on session %s: %w", sessionID, store.ErrNotFound)
	}
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("lease on session %s: %w", sessionID, err)
	}
	return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires.UTC()}, nil
}
