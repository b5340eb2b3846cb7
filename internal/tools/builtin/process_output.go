package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed process_output.md
var processOutputDescription string

//go:embed process_kill.md
var processKillDescription string

const processOutputSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "The process id, such as \"bg1\"."},
    "wait_for": {"type": "string", "description": "RE2 regular expression to wait for."},
    "timeout": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Seconds to wait. Default 30."}
  },
  "required": ["id"],
  "additionalProperties": false
}`

const processKillSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "The process id, such as \"bg1\"."}
  },
  "required": ["id"],
  "additionalProperties": false
}`

// Limits of process_output.
const (
	defaultProcessWait = 30 * time.Second
	maxProcessOutput   = 32 << 10
)

// processOutput is the process_output tool. It only reads what a process
// of this session printed, so it needs no approval.
type processOutput struct{}

// processKill is the process_kill tool. It stops only a process this
// session started, which needs no more approval than starting it had; so
// like process_output it declares the read risk.
type processKill struct{}

// NewProcessOutput returns the process_output tool.
func NewProcessOutput() tools.Tool { return processOutput{} }

// NewProcessKill returns the process_kill tool.
func NewProcessKill() tools.Tool { return processKill{} }

type processArgs struct {
	ID      string  `json:"id"`
	WaitFor string  `json:"wait_for"`
	Timeout jsonInt `json:"timeout"`
}

// processOutputInfo is what process_output is to the agent; Info returns it, shared.
var processOutputInfo = tools.Info{Name: "process_output", Description: processOutputDescription, Schema: json.RawMessage(processOutputSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (processOutput) Info() tools.Info { return processOutputInfo }

func (processOutput) Summary(args json.RawMessage) string {
	var a processArgs
	if decodeArgs(args, &a) != nil {
		return "Read a background process's output"
	}
	if a.WaitFor != "" {
		return fmt.Sprintf("Wait for %q from %s", oneLineCommand(a.WaitFor), a.ID)
	}
	return "Read the output of " + a.ID
}

func (processOutput) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a processArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	j, err := job(env, a.ID)
	if err != nil {
		return tools.Result{}, err
	}
	var pattern *regexp.Regexp
	if a.WaitFor != "" {
		if pattern, err = regexp.Compile(a.WaitFor); err != nil {
			return tools.Result{}, fmt.Errorf("wait_for is not a valid regular expression: %w", err)
		}
	}
	wait := defaultProcessWait
	if a.Timeout > 0 {
		wait = time.Duration(a.Timeout) * time.Second
	}
	r := j.Read(ctx, pattern, wait)
	var b strings.Builder
	writeJobOutput(&b, r)
	switch {
	case pattern == nil:
	case r.Matched:
		fmt.Fprintf(&b, "[%q appeared]\n", a.WaitFor)
	case r.TimedOut:
		fmt.Fprintf(&b, "[%q did not appear within %s]\n", a.WaitFor, wait)
	default:
		fmt.Fprintf(&b, "[%q did not appear before the process ended]\n", a.WaitFor)
	}
	b.WriteString(jobState(r.Info))
	return tools.Result{Content: b.String(), IsError: pattern != nil && !r.Matched}, nil
}

// processKillInfo is what process_kill is to the agent; Info returns it, shared.
var processKillInfo = tools.Info{Name: "process_kill", Description: processKillDescription, Schema: json.RawMessage(processKillSchema),
	Risk: tools.RiskRead, ConcurrencySafe: false}

func (processKill) Info() tools.Info { return processKillInfo }

// processKillArgs are process_kill's arguments: only the id.
type processKillArgs struct {
	ID string `json:"id"`
}

func (processKill) Summary(args json.RawMessage) string {
	var a processKillArgs
	if decodeArgs(args, &a) != nil {
		return "Stop a background process"
	}
	return "Stop " + a.ID
}

func (processKill) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a processKillArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	if _, err := job(env, a.ID); err != nil {
		return tools.Result{}, err
	}
	j, err := env.Jobs.Stop(env.SessionID, a.ID)
	if err != nil {
		return tools.Result{}, err
	}
	var b strings.Builder
	writeJobOutput(&b, j.Read(ctx, nil, 0))
	b.WriteString(jobState(j.Info()))
	return tools.Result{Content: b.String()}, nil
}

// job finds a background process of the session.
func job(env *tools.Env, id string) (*execx.Job, error) {
	if env == nil || env.Jobs == nil {
		return nil, fmt.Errorf("background processes are not available here")
	}
	j, err := env.Jobs.Get(env.SessionID, strings.TrimSpace(id))
	if err != nil {
		return nil, fmt.Errorf("%w (run_command with background: true gives the ids)", err)
	}
	return j, nil
}

// writeJobOutput writes a read's output, capped, or says there was none.
func writeJobOutput(b *strings.Builder, r execx.Read) {
	if r.Dropped > 0 {
		fmt.Fprintf(b, "[%d earlier bytes were not kept]\n", r.Dropped)
	}
	if r.Output == "" {
		b.WriteString("(no new output)\n")
		return
	}
	out := tools.Truncate(strings.ToValidUTF8(r.Output, "\uFFFD"), maxProcessOutput)
	b.WriteString(out)
	if !strings.HasSuffix(out, "\n") {
		b.WriteByte('\n')
	}
}

// jobState is the closing line of a result: running or how it ended.
func jobState(i execx.JobInfo) string {
	if i.Running {
		return fmt.Sprintf("[%s (pid %d) is running, for %s]", i.ID, i.PID, time.Since(i.Started).Round(time.Second))
	}
	return fmt.Sprintf("[%s (pid %d) has ended, exit code %d]", i.ID, i.PID, i.ExitCode)
}

// oneLineCommand shows a command on one line, at most 80 characters.
func oneLineCommand(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
