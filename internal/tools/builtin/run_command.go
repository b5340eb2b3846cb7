package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed run_command.md
var runCommandDescription string

const runCommandSchema = `{
  "type": "object",
  "properties": {
    "command": {
      "type": "string",
      "description": "The shell command, run with bash -c."
    },
    "workdir": {
      "type": "string",
      "description": "Directory to run in, relative to the workspace root. Default: the workspace root."
    },
    "timeout": {
      "type": "integer",
      "minimum": 1,
      "maximum": 600,
      "description": "Seconds before the command is killed. Default 120, at most 600."
    },
    "escalate": {
      "type": "boolean",
      "description": "Run outside the sandbox. Only after a command failed because the sandbox denied a write or the network, and with a justification; the user is always asked."
    },
    "justification": {
      "type": "string",
      "maxLength": 300,
      "description": "With escalate: one line telling the user why the command must run outside the sandbox."
    },
    "background": {
      "type": "boolean",
      "description": "Start it in the background and return its id at once."
    }
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Limits of run_command.
const (
	defaultCommandTimeout = 120 * time.Second
	maxCommandOutput      = 32 << 10
)

// MaxCommandOutput is how much of a command's output run_command keeps
// (head and tail); custom commands' !`command` lines keep as much.
const MaxCommandOutput = maxCommandOutput

// runCommand is the run_command tool.
type runCommand struct {
	env []string
}

// NewRunCommand returns the run_command tool. Commands inherit only the
// allowed environment variables (execx.DefaultEnvAllow plus extraEnv),
// never one that looks like a credential.
func NewRunCommand(extraEnv ...string) tools.Tool {
	return &runCommand{env: execx.Env(os.Environ(), append(append([]string{}, execx.DefaultEnvAllow...), extraEnv...))}
}

type runCommandArgs struct {
	Command       string `json:"command"`
	Workdir       string `json:"workdir"`
	Timeout       int    `json:"timeout"`
	Escalate      bool   `json:"escalate"`
	Justification string `json:"justification"`
	Background    bool   `json:"background"`
}

// runCommandInfo is what run_command is to the agent; Info returns it, shared.
var runCommandInfo = tools.Info{Name: "run_command", Description: runCommandDescription, Schema: json.RawMessage(runCommandSchema),
	Risk: tools.RiskExecute, ConcurrencySafe: false}

func (*runCommand) Info() tools.Info { return runCommandInfo }
func (*runCommand) Summary(args json.RawMessage) string {
	var a runCommandArgs
	if decodeArgs(args, &a) != nil {
		return "Run a command"
	}
	cmd := strings.Join(strings.Fields(a.Command), " ")
	if r := []rune(cmd); len(r) > 80 {
		cmd = string(r[:79]) + "…"
	}
	if a.Escalate {
		return "Run outside the sandbox: " + cmd
	}
	if a.Background {
		return "Run in the background: " + cmd
	}
	return "Run " + cmd
}

func (rc *runCommand) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a runCommandArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return tools.Result{}, fmt.Errorf("the command is empty")
	}
	if a.Escalate && strings.TrimSpace(a.Justification) == "" {
		return tools.Result{}, fmt.Errorf("escalate needs a one-line justification for the user")
	}
	dir := ws.Root()
	if a.Workdir != "" {
		abs, rel, err := ws.Resolve(a.Workdir)
		if err != nil {
			return tools.Result{}, err
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.IsDir() {
			return tools.Result{}, fmt.Errorf("workdir %s is not a directory in the workspace", rel)
		}
		dir = abs
	}
	timeout := defaultCommandTimeout
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout) * time.Second
	}
	var output func([]byte)
	if env.Output != nil {
		output = func(b []byte) { env.Output(string(b)) }
	}
	script := a.Command
	if strings.TrimSpace(env.CommandSetup) != "" {
		// eval runs it in the command's own shell, so its exports stay;
		// a mistake in it fails only the eval, not the command.
		script = "eval " + quoteShell(env.CommandSetup) + " >/dev/null 2>&1\n" + script
	}
	runner := env.Commands
	if a.Escalate {
		runner = runner.Unconfined()
	}
	if a.Background {
		return rc.startBackground(env, runner, a.Command, script, dir)
	}
	// The whole output goes to a file as it comes; it is kept only if the
	// result has to be cut.
	var spill *tools.OutputFile
	if env.Outputs != nil && env.CallID != "" {
		spill, _ = env.Outputs.Create(env.CallID)
	}
	cmd := execx.Command{
		Script: script, Dir: dir, Env: rc.env, Timeout: timeout,
		MaxOutput: maxCommandOutput, Output: output,
	}
	if spill != nil {
		cmd.Spill = spill
	}
	res, err := runner.Run(ctx, cmd)
	if err != nil {
		if spill != nil {
			spill.Discard()
		}
		return tools.Result{}, err
	}
	note := ""
	if spill != nil {
		note = keepOutput(spill, res.Truncated, env.CallID)
	}
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(res.Output, "\uFFFD"))
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[command timed out after %s and was killed]", timeout)
	default:
		fmt.Fprintf(&b, "[exit code %d, %.1fs]", res.ExitCode, res.Duration.Seconds())
	}
	if res.ExitCode != 0 && !a.Escalate && runner.Enforced() {
		if sn := sandboxNote(res.Output, runner.Sandbox.Policy()); sn != "" {
			b.WriteString("\n" + sn)
		}
	}
	if !a.Escalate && runner.Enforced() {
		if pn := placeholderNote(res.Output, runner.Sandbox.Placeholders()); pn != "" {
			b.WriteString("\n" + pn)
		}
	}
	b.WriteString(note)
	return tools.Result{Content: b.String(), IsError: res.TimedOut || res.ExitCode != 0}, nil
}

// keepOutput keeps the file of a cut output and returns the line that
// tells the model how to read it; an output the result holds whole needs
// no file.
func keepOutput(spill *tools.OutputFile, cut bool, callID string) string {
	if !cut {
		spill.Discard()
		return ""
	}
	kept, total := spill.Kept()
	if err := spill.Keep(); err != nil {
		return fmt.Sprintf("\n[the whole output (%d bytes) could not be kept: %v]", total, err)
	}
	what := fmt.Sprintf("the whole output (%d bytes) is kept", total)
	if kept < total {
		what = fmt.Sprintf("the first %d of its %d bytes are kept", kept, total)
	}
	return fmt.Sprintf("\n[%s: read it with read_tool_output call_id=%q]", what, callID)
}

// quoteShell quotes s as one bash word.
func quoteShell(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
