package app

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// TempJournalDirName is the directory inside the home where each process
// lists the temporary files its workspace writes create (tools.TempJournal).
const TempJournalDirName = "tmp"

// startup tidies what earlier processes left: sessions left running by a
// dead process get a failed turn; stale temporary files and command
// outputs older than OutputMaxAge go. None of it stops the start;
// problems are logged.
func (a *App) startup(ctx context.Context) {
	ids, err := a.Core.RecoverInterrupted(ctx)
	if err != nil {
		a.log().Warn("recover interrupted sessions", "err", err)
	} else if len(ids) > 0 {
		a.log().Info("recovered interrupted sessions", "sessions", ids)
	}
	a.started.Recovered = ids
	if kept := a.recoverWorktrees(ctx); len(kept) > 0 {
		a.log().Info("kept the work of interrupted subagents on their branches", "branches", kept)
	}
	if a.started.TempFiles = a.cleanTempFiles(); len(a.started.TempFiles) > 0 {
		a.log().Info("removed stale temporary files", "files", a.started.TempFiles)
	}
	if a.started.Outputs = pruneOutputs(ctx, a.Store, a.Home, OutputMaxAge, time.Now()); len(a.started.Outputs) > 0 {
		a.log().Info("removed old command outputs", "files", a.started.Outputs)
	}
}

// cleanTempFiles removes the temporary files that killed processes left in
// the home (config and secrets saves) and in workspaces (atomic writes,
// from the journals of dead processes), and returns them.
func (a *App) cleanTempFiles() []string {
	removed := config.CleanStaleTemps(a.Home, store.ProcessAlive)
	removed = append(removed, secret.CleanStaleTemps(a.Home)...)
	return append(removed, tools.CleanTempJournals(filepath.Join(a.Home, TempJournalDirName), store.ProcessAlive)...)
}

// log returns the app's logger, or one that discards.
func (a *App) log() *slog.Logger {
	if a.opts.Logger != nil {
		return a.opts.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
