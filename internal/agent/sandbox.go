package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// CommandsFunc builds the runner of a session's shell commands: the
// sandbox they run in. Its errors (malformed sandbox settings) stop the
// turn before it starts.
type CommandsFunc func(ctx context.Context, sess *protocol.Session) (*execx.Runner, error)

// sandboxGate is the sandbox's part of a run_command decision, after the
// policy's (see SandboxGate); it warns once that no sandbox is in force
// when that turns an allow into an ask.
func (t *turn) sandboxGate(c *call, d permission.Decision) permission.Decision {
	if c.Name != permission.CommandTool {
		return d
	}
	var a struct {
		Escalate      bool   `json:"escalate"`
		Justification string `json:"justification"`
	}
	_ = json.Unmarshal(c.args, &a)
	g := SandboxGate(d, t.policy.Mode(), t.cmds, a.Escalate, a.Justification)
	if g.Source.Check == checkNoSandbox && d.Source.Check != checkNoSandbox {
		if n := t.cmds.Sandbox.Notice(); n != "" {
			t.tell(protocol.Event{Type: protocol.EventWarning, Text: n, Step: t.step})
		}
	}
	return g
}

// checkNoSandbox names the hard check that asks when no sandbox is in
// force.
const checkNoSandbox = "no sandbox"

// SandboxGate is the sandbox's part of the decision d on a shell command
// that would run with runner, after the policy's. A command asking to run
// outside the sandbox (escalate) always needs the user's approval (bypass
// mode excepted), and so does every command that is not read-only while
// no sandbox is in force (fail closed). Only an allow is turned into an
// ask: deny rules and the catastrophic list stay as they are, and no
// grant is offered, since none could skip the ask. Custom commands'
// !`command` lines pass the same gate.
func SandboxGate(d permission.Decision, mode permission.Mode, runner *execx.Runner, escalate bool, justification string) permission.Decision {
	if d.Action != permission.Allow || mode == permission.ModeBypass {
		return d
	}
	switch {
	case escalate:
		d.Action, d.Suggest = permission.Ask, ""
		d.Source = permission.Source{Kind: permission.SourceHardCheck, Check: "runs outside the sandbox"}
		d.Reason = fmt.Sprintf("the command asks to run outside the sandbox: %s", strings.TrimSpace(justification))
	case runner != nil && runner.Sandbox != nil && runner.Sandbox.Policy().Mode != sandbox.ModeOff && !runner.Enforced() &&
		d.Source.Kind != permission.SourceReadOnly:
		d.Action, d.Suggest = permission.Ask, ""
		d.Source = permission.Source{Kind: permission.SourceHardCheck, Check: checkNoSandbox}
		d.Reason = "no command sandbox is in force on this machine, so every command that is not read-only needs approval"
	}
	return d
}
