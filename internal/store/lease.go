package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// unknownHost stands for this host in owners when os.Hostname fails. Owners
// naming it are never judged local, since two such hosts cannot be told
// apart.
const unknownHost = "unknown-host"

// NewOwner returns a lease owner name unique to this call:
// "<hostname>:<pid>:<8 random hex digits>". AcquireLease reads the host and
// pid back to take over at once the lease of a process of this host that is
// gone.
func NewOwner() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return fmt.Sprintf("%s:%d:%s", hostname(), os.Getpid(), hex.EncodeToString(b[:]))
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return unknownHost
	}
	return h
}

// parseOwner splits an owner made by NewOwner. The host is everything
// before the last two fields, so a host with a colon still parses.
func parseOwner(owner string) (host string, pid int, ok bool) {
	rest, _, ok := cutLast(owner, ":")
	if !ok {
		return "", 0, false
	}
	host, p, ok := cutLast(rest, ":")
	if !ok || host == "" {
		return "", 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return host, pid, true
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// ownerGone reports whether owner is a process of this host that no longer
// runs. Owners it cannot judge (other hosts, foreign formats) are not gone.
func (s *SQLite) ownerGone(owner string) bool {
	host, pid, ok := parseOwner(owner)
	if !ok || host == unknownHost || host != s.hostname {
		return false
	}
	return !s.alive(pid)
}

// AcquireLease makes owner the writer of the session for ttl (ttl <= 0
// means DefaultLeaseTTL). It reads and writes the lease in one BEGIN
// IMMEDIATE transaction, so two processes racing for it are serialised by
// SQLite. The lease is granted if there is none, if it has expired, if owner
// already holds it, or if its holder is a process of this host that is gone;
// otherwise AcquireLease fails with *LeaseHeldError.
func (s *SQLite) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error) {
	if owner == "" {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: empty owner", sessionID)
	}
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
	}
	defer rollback(tx)
	now := s.now()
	var held string
	var heldUntil int64
	err = tx.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE session_id = ?`,
		sessionID).Scan(&held, &heldUntil)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
	case held == owner, ms(now) >= heldUntil, s.ownerGone(held):
	default:
		return protocol.Lease{}, &LeaseHeldError{SessionID: sessionID, Owner: held, ExpiresAt: fromMS(heldUntil)}
	}
	expires := fromMS(ms(now.Add(ttl)))
	if _, err := tx.ExecContext(ctx, `INSERT INTO leases (session_id, owner, expires_at, acquired_at)
VALUES (?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner,
expires_at = excluded.expires_at,
acquired_at = CASE WHEN leases.owner = excluded.owner THEN leases.acquired_at ELSE excluded.acquired_at END`,
		sessionID, owner, ms(expires), ms(now)); err != nil {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
	}
	if err := tx.Commit(); err != nil {
		return protocol.Lease{}, fmt.Errorf("acquire lease on session %s: %w", sessionID, err)
	}
	return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires}, nil
}

// RenewLease extends owner's lease to now+ttl (ttl <= 0 means
// DefaultLeaseTTL). An expired lease that nobody took over is still owner's
// and is renewed. If the lease now belongs to someone else or was released,
// RenewLease fails with an error wrapping ErrLeaseLost.
func (s *SQLite) RenewLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (protocol.Lease, error) {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	expires := fromMS(ms(s.now().Add(ttl)))
	res, err := s.w.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE session_id = ? AND owner = ?`,
		ms(expires), sessionID, owner)
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("renew lease on session %s: %w", sessionID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("renew lease on session %s: %w", sessionID, err)
	}
	if n == 0 {
		return protocol.Lease{}, fmt.Errorf("renew lease on session %s as %s: %w", sessionID, owner, ErrLeaseLost)
	}
	return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: expires}, nil
}

// ReleaseLease gives up owner's lease; releasing a lease one does not hold
// is not an error.
func (s *SQLite) ReleaseLease(ctx context.Context, sessionID, owner string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM leases WHERE session_id = ? AND owner = ?`,
		sessionID, owner); err != nil {
		return fmt.Errorf("release lease on session %s: %w", sessionID, err)
	}
	return nil
}

// GetLease returns the session's unexpired lease, or an error wrapping
// ErrNotFound if there is none or it has expired. (An expired lease may
// still be renewed by its owner until someone takes it over.)
func (s *SQLite) GetLease(ctx context.Context, sessionID string) (protocol.Lease, error) {
	var owner string
	var expires int64
	err := s.r.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE session_id = ?`,
		sessionID).Scan(&owner, &expires)
	if errors.Is(err, sql.ErrNoRows) || err == nil && ms(s.now()) >= expires {
		return protocol.Lease{}, fmt.Errorf("lease on session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return protocol.Lease{}, fmt.Errorf("lease on session %s: %w", sessionID, err)
	}
	return protocol.Lease{SessionID: sessionID, Owner: owner, ExpiresAt: fromMS(expires)}, nil
}

// ProcessAlive reports whether the process with this pid runs on this
// host (every process counts as running where that cannot be told). Other
// packages use it to tell what a dead process of this host left behind.
func ProcessAlive(pid int) bool { return processAlive(pid) }

// OwnerGone reports whether owner (made by NewOwner) is a process of this
// host that no longer runs. Owners it cannot judge (other hosts, foreign
// formats) are not gone.
func OwnerGone(owner string) bool {
	host, pid, ok := parseOwner(owner)
	return ok && host != unknownHost && host == hostname() && !processAlive(pid)
}
