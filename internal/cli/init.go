package cli

import (
	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
)

// newInitCmd is `mx-claw init`: a run whose prompt asks the model to
// survey the repository and write or improve AGENTS.md. The write needs
// approval (AGENTS.md is protected in every mode but bypass), so calls
// that need it pause by default: the command prints how to approve.
func newInitCmd(stdio IO) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "init [flags] [INSTRUCTIONS]",
		Short: "Write or improve the workspace's AGENTS.md",
		Long: `Have the model survey the workspace and write AGENTS.md (or improve the one
there): build, test and lint commands, layout, conventions. The edit is an
ordinary one: by default the run pauses when the model wants to write the file
(exit 4) and prints the ` + "`mx-claw approve`" + ` command that shows the call and
writes it. Any arguments are added to the instructions.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			extra := ""
			for i, a := range args {
				if i > 0 {
					extra += " "
				}
				extra += a
			}
			return runTask(cmd.Context(), stdio, f, []string{app.InitPrompt(extra)})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print every event as one JSON line")
	fl.StringVar(&f.model, "model", "", "model to use, as provider/model")
	fl.IntVar(&f.maxIterations, "max-iterations", 30, "maximum model steps (a survey reads many files)")
	fl.StringVar(&f.cwd, "cwd", "", "workspace directory (default: the current directory)")
	f.perm.register(fl)
	_ = fl.Set("on-ask", "pause")
	fl.Lookup("on-ask").DefValue = "pause"
	return cmd
}
