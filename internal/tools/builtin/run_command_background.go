package builtin

import (
	"fmt"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// startBackground starts a run_command call with background: true through
// runner (the session's sandbox) and returns its id at once. The
// permission decision was the command's own, as for a command run in the
// foreground.
func (rc *runCommand) startBackground(env *tools.Env, runner *execx.Runner, command, script, dir string) (tools.Result, error) {
	if env.Jobs == nil {
		return tools.Result{}, fmt.Errorf("background processes are not available here; run the command without background")
	}
	j, err := env.Jobs.Start(runner, execx.Command{Script: script, Dir: dir, Env: rc.env}, env.SessionID)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: fmt.Sprintf("Started background process %s (pid %d): %s\n"+
		"It runs until it ends, process_kill stops it, or mx-claw exits. "+
		"Read its output with process_output id=%q (wait_for a line such as the one saying it is ready).",
		j.ID, j.PID, oneLineCommand(command), j.ID)}, nil
}
