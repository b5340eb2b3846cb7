package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/acp"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
)

// stdioFlags are the flags of the stdio front doors (acp, app-server).
type stdioFlags struct {
	model string
	mode  string
	trust bool
}

func (f *stdioFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to use, as provider/model (default: the configured default)")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode of new turns: default, acceptEdits, plan or bypass (default: settings, else default)")
	fl.BoolVar(&f.trust, "trust", false, "trust the workspaces' own settings and hooks (remembered)")
}

// openStdio opens the app of a stdio front door, logging to
// $MX_CLAW_HOME/logs/NAME.log (stdout carries protocol messages only). The
// caller closes the app and the log.
func openStdio(ctx context.Context, f stdioFlags, name string) (*app.Driver, *app.App, *slog.Logger, func(), error) {
	perm := permFlags{mode: f.mode}
	mode, _, err := perm.options()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	home, err := config.Home()
	if err != nil {
		return nil, nil, nil, nil, usageErr(err)
	}
	dir := filepath.Join(home, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("log directory: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("open log: %w", err)
	}
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo})).With("pid", os.Getpid())
	a, err := openApp(ctx, app.Options{Mode: mode, Trust: f.trust, Logger: log})
	if err != nil {
		logf.Close()
		return nil, nil, nil, nil, err
	}
	if f.model != "" {
		if _, err := a.ResolveModel(f.model); err != nil {
			a.Close()
			logf.Close()
			return nil, nil, nil, nil, usageErr(err)
		}
	}
	return app.NewDriver(a, f.model), a, log, func() { a.Close(); logf.Close() }, nil
}

func newACPCmd(stdio IO) *cobra.Command {
	var f stdioFlags
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdin and stdout, for editors",
		Long: `Speak the Agent Client Protocol (version 1, JSON-RPC over stdin and stdout)
so that an editor such as Zed drives mx-claw as its agent. Stdout carries
protocol messages only; diagnostics go to $MX_CLAW_HOME/logs/acp.log.

Sessions are mx-claw's own: stored, listed by ` + "`mx-claw sessions`" + `, and
continued from the terminal or another editor.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			d, _, log, closeAll, err := openStdio(cmd.Context(), f, "acp")
			if err != nil {
				return err
			}
			defer closeAll()
			log.Info("acp start", "version", Version)
			err = acp.Serve(cmd.Context(), stdio.In, stdio.Out, acp.Options{Driver: d, Version: Version, Logger: log})
			log.Info("acp stop", "err", err)
			return err
		},
	}
	f.register(cmd)
	return cmd
}
