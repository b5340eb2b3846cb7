package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/modelcmd"
)

// firstRun runs the model wizard when mx-claw starts in a terminal with no
// config.json yet: a new user gets set up instead of an error naming a
// command to run. The wizard lists the provider's models to pick from and
// tests the settings with one small request before it saves them.
func firstRun(ctx context.Context, stdio IO, a *app.App) error {
	in, ok := stdio.In.(*os.File)
	if !ok {
		return nil
	}
	fmt.Fprintln(stdio.Out, "Welcome to mx-claw. No model is configured yet; let's set one up (Ctrl-C cancels).")
	h := &modelcmd.Handler{Config: a.Config, Secrets: a.Secrets, Out: stdio.Out, Prefix: "mx-claw model",
		Prompt: newTermPrompter(in, stdio.Out), Probe: app.ProbeModel}
	if err := modelError(h.Wizard(ctx)); err != nil {
		return err
	}
	fmt.Fprintln(stdio.Out, "Saved. `mx-claw model` changes it later; starting mx-claw…")
	return nil
}
