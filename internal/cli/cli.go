// Package cli is mx-claw's command line: subcommands, flags and exit codes
// (DESIGN §11). It parses, wires an app.App and hands the work to a front
// end; it holds no agent logic.
//
// Only cmd/mx-claw imports cli.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/sandbox"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Version is mx-claw's version.
const Version = "0.1.0-dev"

// Exit codes of DESIGN §11.
const (
	ExitOK        = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitBudget    = 3
	ExitPaused    = 4
	ExitCancelled = 130
)

// exitError carries an exit code with the message to print.
type exitError struct {
	code int
	err  error
	// quiet says the command already explained the error to the user.
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks err as a usage or configuration error (exit 2).
func usageErr(err error) error { return &exitError{code: ExitUsage, err: err} }

// openApp loads the config of the home directory and opens the app on it;
// a missing home or a broken config is a usage error. The caller closes
// the app.
func openApp(ctx context.Context, opts app.Options) (*app.App, error) {
	home, err := config.Home()
	if err != nil {
		return nil, usageErr(err)
	}
	cfg, err := config.Load(home)
	if err != nil {
		return nil, usageErr(err)
	}
	opts.Version = Version
	return app.Open(ctx, home, cfg, opts)
}

// usagef returns a usage error with a formatted message.
func usagef(format string, args ...any) error { return usageErr(fmt.Errorf(format, args...)) }

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs mx-claw with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdio IO) int {
	if len(args) > 0 && args[0] == sandbox.HelperArg {
		// The binary re-executed as the sandbox helper: it confines
		// itself and becomes the command, or fails with its status.
		return sandbox.HelperMain(append([]string{"mx-claw"}, args...), stdio.Err)
	}
	if home, err := config.Home(); err == nil {
		// Commands a killed mx-claw left running die now.
		app.ReapCommands(home)
	}
	root := newRoot(stdio)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var ee *exitError
	if errors.As(err, &ee) && ee.quiet {
		return code
	}
	if code != ExitCancelled || !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stdio.Err, "Error: %v\n", err)
	} else {
		fmt.Fprintln(stdio.Err, "Cancelled.")
	}
	return code
}

// exitCode maps an error to the exit code of DESIGN §11.
func exitCode(err error) int {
	var ee *exitError
	var maxIter *agent.MaxIterationsError
	var budget *agent.BudgetError
	var loop *agent.LoopError
	var cfgErr *agent.ConfigError
	var held *store.LeaseHeldError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled):
		return ExitCancelled
	case errors.As(err, &maxIter), errors.As(err, &budget), errors.As(err, &loop):
		return ExitBudget
	case errors.As(err, &cfgErr), errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, agent.ErrNoPendingApproval):
		return ExitUsage
	case errors.As(err, &held), errors.Is(err, agent.ErrTurnActive):
		return ExitFailed
	}
	return ExitFailed
}

func newRoot(stdio IO) *cobra.Command {
	var tf tuiFlags
	root := &cobra.Command{
		Use:   "mx-claw",
		Short: "A coding agent for your terminal",
		Long: `mx-claw is a coding agent: give it a task in a workspace and a language model
decides what to read, search, edit and run, through tools mx-claw controls.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTUI(cmd.Context(), stdio, tf)
		},
	}
	// --version, as every peer has; the version subcommand stays.
	root.Version = Version
	root.SetVersionTemplate("mx-claw {{.Version}}\n")
	tf.register(root.Flags())
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageErr(err) })
	root.AddCommand(newRunCmd(stdio), newSessionsCmd(stdio), newVersionCmd(stdio), newModelCmd(stdio), newDoctorCmd(stdio))
	root.AddCommand(newApproveCmd(stdio, true), newApproveCmd(stdio, false), newPermissionsCmd(stdio))
	root.AddCommand(newSandboxCmd(stdio))
	root.AddCommand(newDebugCmd(stdio), newMCPCmd(stdio))
	root.AddCommand(newACPCmd(stdio), newAppServerCmd(stdio))
	root.AddCommand(newServeCmd(stdio))
	root.AddCommand(newMemoryCmd(stdio), newSkillsCmd(stdio), newPluginsCmd(stdio))
	root.AddCommand(newInitCmd(stdio))
	root.AddCommand(newUndoCmd(stdio), newRewindCmd(stdio), newImportCmd(stdio))
	return root
}

func newVersionCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mx-claw's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(stdio.Out, "mx-claw %s\n", Version)
			return err
		},
	}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
