package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tui"
)

// tuiFlags are the flags of the interactive UI (the root command).
type tuiFlags struct {
	cont    bool
	resume  string
	model   string
	mode    string
	trust   bool
	sandbox string
	addDirs []string
}

func (f *tuiFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.cont, "continue", false, "continue the workspace's latest session")
	fl.StringVar(&f.resume, "resume", "", "resume the session with this id")
	fl.StringVar(&f.model, "model", "", "model to use, as provider/model")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan or bypass (default: settings, else default)")
	fl.BoolVar(&f.trust, "trust", false, "trust this workspace's own settings and hooks (remembered)")
	AddSandboxFlag(fl, &f.sandbox)
	fl.StringArrayVar(&f.addDirs, "add-dir", nil, "a directory beside the workspace the tools may also use (repeatable)")
}

// runTUI opens the interactive UI in the current directory: on a new
// session, the latest one (--continue) or a given one (--resume).
func runTUI(ctx context.Context, stdio IO, f tuiFlags) error {
	if !isTerminal(stdio.Out) || !isTerminal(stdio.In) {
		return usagef("the interactive UI needs a terminal; in scripts and pipes use `mx-claw run PROMPT` (or `mx-claw run --json`)")
	}
	if f.cont && f.resume != "" {
		return usagef("--continue and --resume cannot be used together")
	}
	var mode permission.Mode
	if f.mode != "" {
		m, err := permission.ParseMode(f.mode)
		if err != nil {
			return usagef("--permission-mode: %v", err)
		}
		mode = m
	}
	ws, err := workspaceDir("")
	if err != nil {
		return err
	}
	if what := broadWorkspace(ws); what != "" && !confirmBroad(stdio.In, stdio.Out, ws, what) {
		return usagef("not started in %s; cd into a project and run mx-claw there", what)
	}
	sbMode, err := SandboxMode(f.sandbox)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, app.Options{Mode: mode, Trust: f.trust, SandboxMode: sbMode, AddDirs: f.addDirs})
	if err != nil {
		return err
	}
	defer a.Close()
	if f.model != "" {
		if _, err := a.ResolveModel(f.model); err != nil {
			return usageErr(err)
		}
	}
	if err := a.CheckWorkspace(ctx, ws); err != nil {
		return usageErr(err)
	}
	if !a.Config.Exists() && f.model == "" {
		if err := firstRun(ctx, stdio, a); err != nil {
			return err
		}
	}
	b := app.NewBackend(a, ws, f.model)

	opts := tui.Options{Backend: b, HistoryFile: historyFile(a.Home, ws), NoColor: os.Getenv("NO_COLOR") != ""}
	if out, ok := stdio.Out.(*os.File); ok {
		if w, h, err := term.GetSize(int(out.Fd())); err == nil {
			opts.Width, opts.Height = w, h
		}
	}
	id := f.resume
	if f.cont {
		latest, err := b.Latest(ctx)
		if err != nil {
			return err
		}
		if latest != nil {
			id = latest.ID
		}
	}
	var sess protocol.Session
	if id != "" {
		sess, opts.History, err = b.ResumeSession(ctx, id)
		if err != nil {
			return usageErr(err)
		}
	} else {
		sess, err = b.NewSession(ctx)
		if err != nil {
			return usageErr(err)
		}
	}
	opts.Session = sess
	err = tui.Run(ctx, stdio.In, stdio.Out, opts)
	b.EndSessions(context.WithoutCancel(ctx), "prompt_input_exit")
	// A skill proposal still being written gets a little time to finish.
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	a.Core.WaitBackground(wait)
	cancel()
	return err
}

// historyFile is where the input history of a workspace is kept.
func historyFile(home, workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(home, "history", hex.EncodeToString(sum[:8])+".jsonl")
}
