package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

func newPermissionsCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "Explain and audit permission decisions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("say what to do: `mx-claw permissions list`, `mx-claw permissions test \"COMMAND\"` or `mx-claw permissions audit`")
		},
	}
	var mode, cwd string
	var trust bool
	test := &cobra.Command{
		Use:   "test COMMAND",
		Short: "Dry-run the decision for a shell command, part by part",
		Long: `Shows, for each simple command found in COMMAND, the decision run_command would
get and the rule, mode or hard check that made it. Nothing runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return permissionsTest(cmd.Context(), stdio, args[0], mode, cwd, trust)
		},
	}
	test.Flags().StringVar(&mode, "mode", "", "permission mode to test in (default: from settings)")
	test.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	test.Flags().BoolVar(&trust, "trusted", false, "treat the workspace as trusted")

	var session string
	var asJSON bool
	var limit int
	audit := &cobra.Command{
		Use:   "audit",
		Short: "List recorded permission decisions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st store.Store) error {
				list, err := st.Audit(cmd.Context(), session, limit)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(stdio.Out, list)
				}
				tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TIME\tSESSION\tTOOL\tDECISION\tSOURCE\tCALL")
				for _, e := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.CreatedAt.Local().Format(time.DateTime), e.SessionID,
						e.Tool, e.Decision, termsafe.Sanitize(string(e.Source)), termsafe.Sanitize(oneLine(e.Summary, 60)))
				}
				return tw.Flush()
			})
		},
	}
	audit.Flags().StringVar(&session, "session", "", "only this session's decisions")
	audit.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	audit.Flags().IntVar(&limit, "limit", 0, "show at most this many (0: all)")
	cmd.AddCommand(test, audit, newPermissionsListCmd(stdio))
	return cmd
}

func permissionsTest(ctx context.Context, stdio IO, command, modeFlag, cwd string, trusted bool) error {
	ws, err := workspaceDir(cwd)
	if err != nil {
		return err
	}
	var mode permission.Mode
	if modeFlag != "" {
		if mode, err = permission.ParseMode(modeFlag); err != nil {
			return usagef("--mode: %v", err)
		}
	}
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	p, err := a.WorkspacePolicy(ctx, ws, "", mode, trusted)
	if err != nil {
		return usageErr(err)
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	d := p.Decide(permission.Request{Tool: permission.CommandTool, Risk: "execute", Args: args, Command: command,
		Workspace: ws, Home: app.UserHome()})
	fmt.Fprintf(stdio.Out, "mode: %s (%s)\n", p.Mode(), p.ModeOrigin())
	_, err = fmt.Fprintln(stdio.Out, termsafe.Sanitize(permission.Explain(d)))
	for _, ig := range p.Ignored() {
		fmt.Fprintf(stdio.Err, "ignored %s in %s: %s\n", termsafe.Sanitize(ig.Entry), ig.Origin, ig.Reason)
	}
	return err
}
