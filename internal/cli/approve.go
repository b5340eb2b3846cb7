package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/headless"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

type approveFlags struct {
	always, session bool
	rule            string
	message         string
	json            bool
	maxIterations   int
	perm            permFlags
}

// newApproveCmd returns `mx-claw approve` (approve true) or `mx-claw
// reject`: both answer a pending approval and resume its turn, streaming it
// like `mx-claw run`.
func newApproveCmd(stdio IO, approve bool) *cobra.Command {
	var f approveFlags
	use, short := "approve SESSION REQUEST", "Approve a paused tool call and resume its turn"
	if !approve {
		use, short = "reject SESSION REQUEST", "Reject a paused tool call and resume its turn"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

The pending requests of a session are listed by ` + "`mx-claw sessions show ID`" + `.
The turn continues exactly where it paused: the call (or the rejection as
its result), the rest of that model response's calls, then the next model
step. Exit codes as for ` + "`mx-claw run`" + `. A turn that waits for the
answer in another process (the REPL) takes it and goes on there.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return resolveApproval(cmd.Context(), stdio, f, approve, args[0], args[1])
		},
	}
	fl := cmd.Flags()
	if approve {
		fl.BoolVar(&f.always, "always", false, "also allow such calls from now on in this project (saves the narrowest rule)")
		fl.BoolVar(&f.session, "session-scope", false, "also allow such calls for the rest of this session")
		fl.StringVar(&f.rule, "rule", "", "with --always or --session-scope: the rule to save instead of the suggested one, e.g. 'run_command(go test:*)'")
	} else {
		fl.StringVar(&f.message, "message", "", "feedback for the model: why, and what to do instead")
	}
	fl.BoolVar(&f.json, "json", false, "print every event as one JSON line")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "maximum model steps for the resumed turn (default: maxIterations in config.json, else 300)")
	f.perm.register(fl)
	return cmd
}

func resolveApproval(ctx context.Context, stdio IO, f approveFlags, approve bool, sessionID, requestID string) error {
	if f.always && f.session {
		return usagef("--always and --session-scope cannot be used together")
	}
	if f.rule != "" && !f.always && !f.session {
		return usagef("--rule needs --always or --session-scope")
	}
	mode, onAsk, err := f.perm.options()
	if err != nil {
		return err
	}
	sbMode, err := SandboxMode(f.perm.sandbox)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, app.Options{MaxIterations: f.maxIterations, Mode: mode, Trust: f.perm.trust, SandboxMode: sbMode,
		AddDirs: f.perm.addDirs})
	if err != nil {
		return err
	}
	defer a.Close()
	scope := protocol.ScopeOnce
	switch {
	case f.always:
		scope = protocol.ScopeAlways
	case f.session:
		scope = protocol.ScopeSession
	}
	by := "mx-claw approve"
	if !approve {
		by = "mx-claw reject"
	}
	req := agent.ResolveRequest{
		SessionID: sessionID, RequestID: requestID, Approve: approve, Scope: scope,
		Feedback: f.message, Rule: f.rule, MaxIterations: f.maxIterations, OnAsk: onAsk,
		Budget: a.Budget(), By: by,
	}
	if waiting, err := waitedElsewhere(ctx, a, sessionID, requestID); err != nil {
		return err
	} else if waiting {
		// The REPL (or a server) waits for this answer: it takes it from
		// the store and goes on there.
		if err := a.Core.Answer(ctx, req, nil); err != nil {
			return err
		}
		verdict := "Approved"
		if !approve {
			verdict = "Rejected"
		}
		// With --json stdout carries events only, and this process has
		// none: the notice goes to stderr.
		w := stdio.Out
		if f.json {
			w = stdio.Err
		}
		fmt.Fprintf(w, "%s. The turn goes on in the process that waits for this answer.\n", verdict)
		return nil
	}
	printer := headless.NewPrinter(stdio.Out, stdio.Err, f.json)
	err = a.Core.Resolve(ctx, req, printer.Handle)
	if err != nil && !approve && f.message == "" {
		fmt.Fprintln(stdio.Err, "Tip: --message tells the model why and what to do instead.")
	}
	return turnEnded(stdio, sessionID, err, printer, f.json)
}

// waitedElsewhere reports whether a turn of another process waits for the
// answer to the pending approval (see agent.Core.WaitsElsewhere).
func waitedElsewhere(ctx context.Context, a *app.App, sessionID, requestID string) (bool, error) {
	pending, err := a.Store.PendingApprovals(ctx, sessionID)
	if err != nil {
		return false, err
	}
	for _, p := range pending {
		if p.ID == requestID {
			return a.Core.WaitsElsewhere(ctx, p), nil
		}
	}
	return false, nil
}
