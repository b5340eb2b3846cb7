package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/store"
)

// QuarantineDirName is the directory inside the home where `doctor
// --repair` saves the records the store could not read.
const QuarantineDirName = "quarantine"

// RepairReport is what Repair found and did.
type RepairReport struct {
	// Integrity lists what SQLite's quick_check found; empty when sound.
	Integrity []string
	// Sessions is how many sessions were read through.
	Sessions int
	// Saved are the quarantined records saved to files, as "what of
	// session id → file".
	Saved []string
	// Recovered are the sessions left running by a dead process, now
	// failed.
	Recovered []string
	// TempFiles are the stale temporary files removed.
	TempFiles []string
	// Outputs are the kept command outputs removed at start (too old, or
	// of sessions that no longer exist; see OutputMaxAge).
	Outputs []string
}

// repairStore is what Repair needs of the store beyond store.Store.
type repairStore interface {
	IntegrityCheck(ctx context.Context) ([]string, error)
	ResolveQuarantined(ctx context.Context, id int64, resolved string) error
}

// Repair checks and mends the home's state (`mx-claw doctor --repair`):
// it checks the database file, reads every session's records through (so
// any that cannot be decoded is quarantined now rather than in the middle
// of a later turn), saves every quarantined record to a file under
// quarantine/ and marks it resolved, fails the turns of sessions a dead
// process left running, and removes stale temporary files.
func (a *App) Repair(ctx context.Context) (RepairReport, error) {
	var r RepairReport
	rs, ok := a.Store.(repairStore)
	if !ok {
		return r, errors.New("this store cannot be repaired by mx-claw")
	}
	var err error
	if r.Integrity, err = rs.IntegrityCheck(ctx); err != nil {
		return r, err
	}
	list, err := a.Store.ListSessions(ctx, store.ListOptions{WithChildren: true})
	if err != nil {
		return r, err
	}
	for _, s := range list {
		// The reads quarantine what they cannot decode.
		if _, err := a.Store.Messages(ctx, s.ID, 0); err != nil {
			return r, err
		}
		if _, err := a.Store.Events(ctx, s.ID, 0, 0); err != nil {
			return r, err
		}
		if _, err := a.Store.Compactions(ctx, s.ID); err != nil {
			return r, err
		}
		if _, err := a.Store.PendingApprovals(ctx, s.ID); err != nil {
			return r, err
		}
		r.Sessions++
	}
	rows, err := a.Store.Quarantined(ctx, "", false)
	if err != nil {
		return r, err
	}
	for _, q := range rows {
		path, err := a.saveQuarantined(q)
		if err != nil {
			return r, err
		}
		if err := rs.ResolveQuarantined(ctx, q.ID, path); err != nil {
			return r, err
		}
		r.Saved = append(r.Saved, fmt.Sprintf("%s of session %s → %s", q.What(), q.SessionID, path))
	}
	// Opening the app already did the last three; report that too.
	recovered, err := a.Core.RecoverInterrupted(ctx)
	if err != nil {
		return r, err
	}
	r.Recovered = append(append(r.Recovered, a.started.Recovered...), recovered...)
	r.TempFiles = append(append(r.TempFiles, a.started.TempFiles...), a.cleanTempFiles()...)
	r.Outputs = a.started.Outputs
	return r, nil
}

// saveQuarantined writes a quarantined record, as it was stored, to
// quarantine/<session>/<table>-<key>.json (0600) and returns the path.
func (a *App) saveQuarantined(q store.QuarantinedRow) (string, error) {
	dir := filepath.Join(a.Home, QuarantineDirName, safeName(q.SessionID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("save quarantined record: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.json", q.Table, safeName(q.Key), q.ID))
	if err := os.WriteFile(path, q.Content, 0o600); err != nil {
		return "", fmt.Errorf("save quarantined record: %w", err)
	}
	return path, nil
}

// safeName keeps letters, digits, '-' and '_' of s for a file name.
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "_"
	}
	return s
}
