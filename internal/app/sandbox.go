package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// Environment variables that choose the sandbox backend (bwrap, landlock,
// seatbelt, none; default: the best this machine runs) and bubblewrap's
// path, for machines where the automatic choice is wrong and for tests.
const (
	SandboxBackendVar = "MX_CLAW_SANDBOX_BACKEND"
	BwrapPathVar      = "MX_CLAW_BWRAP"
)

// NewSandbox returns the sandbox manager the environment asks for.
func NewSandbox() *sandbox.Manager {
	return sandbox.NewManager(sandbox.Options{Backend: os.Getenv(SandboxBackendVar), BwrapPath: os.Getenv(BwrapPathVar)})
}

// openSandbox builds the sandbox manager and kills the command process
// groups that mx-claw processes killed before (kill -9, a crash) left
// behind.
func (a *App) openSandbox() {
	a.Sandbox = NewSandbox()
	a.groups = commandGroups(a.Home)
	if n := a.groups.Reap(); n > 0 && a.opts.Logger != nil {
		a.opts.Logger.Info("killed commands left by an ended mx-claw", "groups", n)
	}
}

func commandGroups(home string) *execx.Groups {
	return execx.NewGroups(filepath.Join(home, "run", "groups"))
}

// ReapCommands kills what the commands of mx-claw processes that ended
// without cleaning up (kill -9, a crash) left running. Every start of
// mx-claw calls it; it returns how many process groups it killed.
func ReapCommands(home string) int { return commandGroups(home).Reap() }

// SandboxConfig returns the sandbox configuration of a workspace: the
// user's `sandbox` settings, tightened by the project's (which need no
// trust: they can only tighten), under the --sandbox flag.
func (a *App) SandboxConfig(ctx context.Context, workspace string) (sandbox.Config, error) {
	trusted, err := a.Trusted(ctx, workspace)
	if err != nil {
		return sandbox.Config{}, err
	}
	user, project, err := a.settings(workspace, trusted)
	if err != nil {
		return sandbox.Config{}, err
	}
	us, err := sandbox.ParseSettings(user.Path, user.Other["sandbox"])
	if err != nil {
		return sandbox.Config{}, err
	}
	raw := project.Other["sandbox"]
	if !trusted {
		// An untrusted project's settings are parsed only as far as they
		// tighten permissions; its sandbox entry can only tighten too.
		if full, err := permission.LoadProjectSettings(workspace, true); err == nil {
			raw = full.Other["sandbox"]
		}
	}
	ps, err := sandbox.ParseSettings(project.Path, raw)
	if err != nil {
		return sandbox.Config{}, err
	}
	return sandbox.Resolve(us, ps, a.opts.SandboxMode, UserHome()), nil
}

// commands returns the runner of a session's shell commands: its sandbox,
// with a temp dir of its own, and the process-group record.
func (a *App) commands(ctx context.Context, sess *protocol.Session) (*execx.Runner, error) {
	cfg, err := a.SandboxConfig(ctx, sess.Workspace)
	if err != nil {
		return nil, err
	}
	// The session's extra directories (--add-dir) are writable as the
	// workspace is.
	if roots, err := a.roots(ctx, sess); err == nil {
		cfg.WritableRoots = append(cfg.WritableRoots, roots...)
	}
	tmp := filepath.Join(os.TempDir(), fmt.Sprintf("mx-claw-%d", os.Getuid()), "sessions", sess.ID)
	s, err := a.Sandbox.Session(sandbox.Policy{Config: cfg, Workspace: sess.Workspace, TmpDir: tmp})
	if err != nil {
		return nil, err
	}
	return &execx.Runner{Sandbox: s, Groups: a.groups}, nil
}

// Sandbox names the command sandbox of the backend's workspace for the
// status line: "sandbox: bwrap", "sandbox: off" or "no sandbox".
func (b *Backend) Sandbox() string {
	cfg, err := b.a.SandboxConfig(context.Background(), b.ws)
	if err == nil && cfg.Mode == sandbox.ModeOff {
		return "sandbox: off"
	}
	st := b.a.Sandbox.Status()
	if !st.Enforced {
		return "no sandbox"
	}
	if err == nil && cfg.Mode == sandbox.ModeReadOnly {
		return "sandbox: " + st.Backend + " read-only"
	}
	return "sandbox: " + st.Backend
}
