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
// policy's. A command asking to run outside the sandbox always needs the
// user's approval (bypass mode excepted), and so does every command that
// is not read-only while no sandbox is in force (fail closed). Only an
// allow is turned into an ask: deny rules and the catastrophic list stay
// as they are, and no grant is offered, since none could skip the ask.
func (t *turn) sandboxGate(c *call, d permission.Decision) permission.Decision {
	if c.Name != permission.CommandTool || d.Action != permission.Allow || t.policy.Mode() == permission.ModeBypass {
		return d
	}
	var a struct {
		Escalate      bool   `json:"escalate"`
		Justification string `json:"justification"`
	}
	_ = json.Unmarshal(c.args, &a)
	switch {
	case a.Escalate:
		d.Action, d.Suggest = permission.Ask, ""
		d.Source = permission.Source{Kind: permission.SourceHardCheck, Check: "runs outside the sandbox"}
		d.Reason = fmt.Sprintf("the command asks to run outside the sandbox: %s", strings.TrimSpace(a.Justification))
	case t.cmds != nil && t.cmds.Sandbox != nil && t.cmds.Sandbox.Policy().Mode != sandbox.ModeOff && !t.cmds.Enforced() &&
		d.Source.Kind != permission.SourceReadOnly:
		if n := t.cmds.Sandbox.Notice(); n != "" {
			t.tell(protocol.Event{Type: protocol.EventWarning, Text: n, Step: t.step})
		}
		d.Action, d.Suggest = permission.Ask, ""
		d.Source = permission.Source{Kind: permission.SourceHardCheck, Check: "no sandbox"}
		d.Reason = "no command sandbox is in force on this machine, so every command that is not read-only needs approval"
	}
	return d
}
