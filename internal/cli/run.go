package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/headless"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// maxPromptBytes caps a prompt read from stdin.
const maxPromptBytes = 8 << 20

type runFlags struct {
	json          bool
	model         string
	session       string
	cont          bool
	maxIterations int
	cwd           string
	perm          permFlags
	maxTokens     int64
	maxBudgetUSD  float64
	maxTime       time.Duration
	images        []string
}

// permFlags are the permission flags shared by run, approve and reject.
type permFlags struct {
	mode    string
	yolo    bool
	onAsk   string
	trust   bool
	sandbox string
	addDirs []string
}

func (p *permFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&p.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan or bypass (default: settings, else default)")
	fl.BoolVar(&p.yolo, "yolo", false, "same as --permission-mode bypass: allow every call except deny rules and hard checks")
	fl.StringVar(&p.onAsk, "on-ask", "deny", "when a call needs approval: deny it (tell the model) or pause (exit 4; resume with mx-claw approve)")
	fl.BoolVar(&p.trust, "trust", false, "trust this workspace's own settings and hooks (remembered)")
	AddSandboxFlag(fl, &p.sandbox)
	fl.StringArrayVar(&p.addDirs, "add-dir", nil, "a directory beside the workspace the tools may also use (repeatable)")
}

// options turns the flags into app options and the turn's ask policy.
func (p *permFlags) options() (permission.Mode, agent.AskPolicy, error) {
	var mode permission.Mode
	if p.mode != "" {
		m, err := permission.ParseMode(p.mode)
		if err != nil {
			return "", 0, usagef("--permission-mode: %v", err)
		}
		mode = m
	}
	if p.yolo {
		if mode != "" && mode != permission.ModeBypass {
			return "", 0, usagef("--yolo and --permission-mode %s contradict each other", mode)
		}
		mode = permission.ModeBypass
	}
	switch p.onAsk {
	case "deny", "":
		return mode, agent.AskDeny, nil
	case "pause":
		return mode, agent.AskPause, nil
	}
	return "", 0, usagef("--on-ask %q: want deny or pause", p.onAsk)
}

func newRunCmd(stdio IO) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one task headless and print the answer",
		Long: `Run one task without the interactive UI. The prompt is the arguments, or
standard input when there are none. A prompt "/name args" runs the custom
slash command name (see /help in the REPL), as the REPL would. The answer streams to stdout; with --json
every event is printed as one JSON line instead.

Calls that need approval are denied (the model is told why) unless
--on-ask pause stores the approval and exits 4; answer it with
` + "`mx-claw approve`" + ` or ` + "`mx-claw reject`" + `, which resume the turn.

Exit codes: 0 done, 1 turn failed, 2 usage or config error, 3 budget spent
(iterations), 4 paused on an approval, 130 cancelled (SIGINT).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTask(cmd.Context(), stdio, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print every event as one JSON line")
	fl.StringVar(&f.model, "model", "", "model to use, as provider/model")
	fl.StringVar(&f.session, "session", "", "continue the session with this id")
	fl.BoolVar(&f.cont, "continue", false, "continue the workspace's latest session")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "maximum model steps for this turn (default: maxIterations in config.json, else 300)")
	fl.StringVar(&f.cwd, "cwd", "", "workspace directory (default: the current directory)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "stop the turn between steps once it used this many tokens (exit 3)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop the turn between steps once its estimated cost reaches this (exit 3)")
	fl.DurationVar(&f.maxTime, "max-time", 0, "stop the turn between steps after this long, e.g. 10m (exit 3)")
	fl.StringArrayVar(&f.images, "image", nil, "attach an image file to the prompt, for models that read images (repeatable)")
	f.perm.register(fl)
	return cmd
}

func runTask(ctx context.Context, stdio IO, f runFlags, args []string) error {
	if f.session != "" && f.cont {
		return usagef("--session and --continue cannot be used together")
	}
	if f.maxIterations < 0 {
		return usagef("--max-iterations must be positive, got %d", f.maxIterations)
	}
	mode, onAsk, err := f.perm.options()
	if err != nil {
		return err
	}
	if f.maxTokens < 0 || f.maxBudgetUSD < 0 || f.maxTime < 0 {
		return usagef("--max-tokens, --max-budget-usd and --max-time must not be negative")
	}
	prompt, err := readPrompt(stdio.In, args)
	if err != nil {
		return err
	}
	ws, err := workspaceDir(f.cwd)
	if err != nil {
		return err
	}
	if what := broadWorkspace(ws); what != "" {
		fmt.Fprintf(stdio.Err, "Warning: the workspace is %s (%s); the agent can reach every file under it. Use --cwd or cd into a project.\n", what, ws)
	}
	sbMode, err := SandboxMode(f.perm.sandbox)
	if err != nil {
		return err
	}
	imgs, err := app.LoadImages("", f.images)
	if err != nil {
		return usageErr(err)
	}
	a, err := openApp(ctx, app.Options{MaxIterations: f.maxIterations, Mode: mode, Trust: f.perm.trust, SandboxMode: sbMode,
		AddDirs: f.perm.addDirs, Headless: true})
	if err != nil {
		return err
	}
	defer a.Close()

	var sess *protocol.Session
	switch {
	case f.session != "":
		sess, err = a.Store.GetSession(ctx, f.session)
		if errors.Is(err, store.ErrNotFound) {
			return usagef("session %s does not exist; `mx-claw sessions list` shows the sessions", f.session)
		}
		if err != nil {
			return err
		}
	case f.cont:
		list, err := a.Store.ListSessions(ctx, store.ListOptions{Workspace: ws, Limit: 1})
		if err != nil {
			return err
		}
		if len(list) > 0 {
			sess = &list[0]
		}
	}
	modelID := f.model
	if modelID == "" && sess != nil {
		modelID = sess.Model
	}
	model, err := a.ResolveModel(modelID)
	if err != nil {
		return usageErr(err)
	}
	if err := a.CheckWorkspace(ctx, ws); err != nil {
		return usageErr(err)
	}

	sessionID := ""
	if sess != nil {
		sessionID = sess.ID
	}
	input, turnModel, grants, err := customCommand(ctx, a, ws, sessionID, prompt, f.model, stdio.Err)
	if err != nil {
		return err
	}
	if len(imgs) > 0 {
		if err := a.Core.CheckImages(model.ID); err != nil {
			return err
		}
	}
	printer := headless.NewPrinter(stdio.Out, stdio.Err, f.json)
	if sess == nil {
		sess, err = a.Core.CreateSession(ctx, ws, model.ID, printer.Handle)
		if err != nil {
			return err
		}
	}
	err = a.Core.Run(ctx, agent.TurnRequest{
		SessionID:     sess.ID,
		Input:         input,
		TurnModel:     turnModel,
		Grants:        grants,
		Typed:         prompt,
		Model:         model.ID,
		MaxIterations: f.maxIterations,
		OnAsk:         onAsk,
		Budget:        budget(a, f),
		Images:        imgs,
	}, printer.Handle)
	if endErr := a.Core.EndSession(context.WithoutCancel(ctx), sess.ID, "other", printer.Handle); endErr != nil && err == nil {
		err = endErr
	}
	// A skill proposal the turn started finishes before the process
	// ends (the answer is already out); Ctrl-C stops it.
	a.Core.WaitBackground(ctx)
	return turnEnded(stdio, sess.ID, err, printer, f.json)
}

// turnEnded reports how a turn ended and turns it into the command's error:
// a pause prints the request and the commands that answer it (exit 4).
func turnEnded(stdio IO, sessionID string, err error, printer *headless.Printer, jsonOut bool) error {
	printer.EndLine()
	if err == nil {
		err = printer.Err()
	}
	var queued *agent.QueuedError
	if errors.As(err, &queued) {
		fmt.Fprintf(stdio.Err, "Queued: %s.\n", termsafe.Sanitize(queued.Error()))
		fmt.Fprintf(stdio.Err, "  approve: mx-claw approve %s %s; reject: mx-claw reject %s %s --message \"why\"\n",
			sessionID, queued.Waiting.ID, sessionID, queued.Waiting.ID)
		return &exitError{code: ExitPaused, err: err, quiet: true}
	}
	var paused *agent.PausedError
	if errors.As(err, &paused) {
		fmt.Fprintf(stdio.Err, "Paused: %s needs approval (request %s).\n", termsafe.Sanitize(paused.Summary), paused.RequestID)
		fmt.Fprintf(stdio.Err, "  approve: mx-claw approve %s %s [--session-scope | --always]\n", sessionID, paused.RequestID)
		fmt.Fprintf(stdio.Err, "  reject:  mx-claw reject %s %s --message \"why\"\n", sessionID, paused.RequestID)
		if paused.Suggest != "" {
			fmt.Fprintf(stdio.Err, "  --always saves the rule %s for this project.\n", paused.Suggest)
		}
		return &exitError{code: ExitPaused, err: err, quiet: true}
	}
	if err != nil && !jsonOut {
		fmt.Fprintf(stdio.Err, "Session: %s\n", sessionID)
	}
	return err
}

// readPrompt takes the prompt from the arguments, or from stdin when there
// are none and stdin is not a terminal.
func readPrompt(in io.Reader, args []string) (string, error) {
	var prompt string
	if len(args) > 0 {
		prompt = strings.Join(args, " ")
	} else {
		if in == nil || isTerminal(in) {
			return "", usagef("no prompt: pass it as an argument (`mx-claw run \"fix the tests\"`) or on standard input")
		}
		data, err := io.ReadAll(io.LimitReader(in, maxPromptBytes+1))
		if err != nil {
			return "", usagef("read prompt from standard input: %v", err)
		}
		if len(data) > maxPromptBytes {
			return "", usagef("prompt on standard input is larger than %d MiB", maxPromptBytes>>20)
		}
		prompt = string(data)
	}
	if strings.TrimSpace(prompt) == "" {
		return "", usagef("the prompt is empty; say what to do")
	}
	return prompt, nil
}

// workspaceDir returns the absolute, symlink-free workspace directory.
func workspaceDir(cwd string) (string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", usagef("find the current directory: %v", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", usagef("--cwd %s: %v", cwd, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", usagef("workspace %s does not exist", abs)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", usagef("workspace %s is not a directory", abs)
	}
	return real, nil
}

// budget is the run's budget: the config's, with the flags over the
// per-run caps.
func budget(a *app.App, f runFlags) agent.Budget {
	b := a.Budget()
	if f.maxTokens > 0 {
		b.MaxTokens = f.maxTokens
	}
	if f.maxBudgetUSD > 0 {
		b.MaxCostUSD = f.maxBudgetUSD
	}
	if f.maxTime > 0 {
		b.MaxDuration = f.maxTime
	}
	return b
}
