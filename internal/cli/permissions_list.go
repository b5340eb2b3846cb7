package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// ruleJSON is one rule as `permissions list --json` prints it.
type ruleJSON struct {
	List   string `json:"list"`
	Rule   string `json:"rule"`
	Origin string `json:"origin"`
}

// ignoredJSON is one entry not applied.
type ignoredJSON struct {
	Entry  string `json:"entry"`
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

func newPermissionsListCmd(stdio IO) *cobra.Command {
	var cwd, session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the permission mode and every rule in force, with its file",
		Long: `Lists the mode and the allow, ask and deny rules that apply in the workspace:
from your settings.json, the project's .mx-claw/settings.json, and its
.mx-claw/settings.local.json, where "always" approvals are saved (edit or
remove them there). With --session, that session's grants too. Entries not
applied (the project is not trusted) are listed apart.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := workspaceDir(cwd)
			if err != nil {
				return err
			}
			a, err := openApp(ctx, app.Options{})
			if err != nil {
				return err
			}
			defer a.Close()
			p, err := a.WorkspacePolicy(ctx, ws, session, "", false)
			if err != nil {
				return usageErr(err)
			}
			if asJSON {
				out := struct {
					Mode       string        `json:"mode"`
					ModeOrigin string        `json:"modeOrigin"`
					Rules      []ruleJSON    `json:"rules"`
					Ignored    []ignoredJSON `json:"ignored"`
				}{Mode: string(p.Mode()), ModeOrigin: p.ModeOrigin(), Rules: []ruleJSON{}, Ignored: []ignoredJSON{}}
				for _, r := range p.Rules() {
					out.Rules = append(out.Rules, ruleJSON{string(r.List), r.Rule.Text, r.Origin})
				}
				for _, ig := range p.Ignored() {
					out.Ignored = append(out.Ignored, ignoredJSON{ig.Entry, ig.Origin, ig.Reason})
				}
				return writeJSON(stdio.Out, out)
			}
			return printRules(stdio, p)
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	cmd.Flags().StringVar(&session, "session", "", "include this session's grants")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printRules prints a policy's mode and rules as a table.
func printRules(stdio IO, p *permission.Policy) error {
	fmt.Fprintf(stdio.Out, "mode: %s (%s)\n", p.Mode(), p.ModeOrigin())
	rules := p.Rules()
	if len(rules) == 0 {
		fmt.Fprintln(stdio.Out, "no rules: reads run, calls that change things are asked about")
	} else {
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LIST\tRULE\tFROM")
		for _, r := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.List, termsafe.Sanitize(r.Rule.Text), termsafe.Sanitize(r.Origin))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, ig := range p.Ignored() {
		fmt.Fprintf(stdio.Out, "not applied: %s in %s: %s\n", termsafe.Sanitize(ig.Entry), termsafe.Sanitize(ig.Origin), ig.Reason)
	}
	return nil
}
