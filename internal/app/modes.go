package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/permission"
)

// A session's permission mode can change while the REPL runs (Shift+Tab,
// /permissions MODE). The choice lives in this process, for the session:
// its next turns' policies are built with it.

// SetSessionMode sets the permission mode of the session's next turns in
// this process.
func (a *App) SetSessionMode(sessionID string, m permission.Mode) {
	a.sessionModes.Store(sessionID, m)
}

// modeFor returns the mode chosen for the session in this process, else
// the process's.
func (a *App) modeFor(sessionID string) permission.Mode {
	if v, ok := a.sessionModes.Load(sessionID); ok {
		return v.(permission.Mode)
	}
	return a.opts.Mode
}

// errNoBypass refuses a switch to bypass in a REPL that did not start in
// it: a key press must not lift every guard the user started with.
var errNoBypass = errors.New("bypass can only be chosen at start (--permission-mode bypass or --yolo)")

// Modes returns the permission modes Shift+Tab cycles through: default,
// acceptEdits and plan, and bypass only if the REPL started in it.
func (b *Backend) Modes() []string {
	modes := []string{string(permission.ModeDefault), string(permission.ModeAcceptEdits), string(permission.ModePlan)}
	if b.startMode == string(permission.ModeBypass) {
		modes = append(modes, string(permission.ModeBypass))
	}
	return modes
}

// SetMode sets the permission mode of the session's next turns and returns
// the mode in force for it.
func (b *Backend) SetMode(ctx context.Context, sessionID, mode string) (string, error) {
	m, err := permission.ParseMode(mode)
	if err != nil {
		return "", err
	}
	if m == permission.ModeBypass && b.startMode != string(permission.ModeBypass) {
		return "", errNoBypass
	}
	b.a.SetSessionMode(sessionID, m)
	s, err := b.a.Store.GetSession(ctx, sessionID)
	if err != nil {
		return "", err
	}
	p, err := b.a.policy(ctx, s)
	if err != nil {
		return "", fmt.Errorf("permission mode: %w", err)
	}
	return string(p.Mode()), nil
}
