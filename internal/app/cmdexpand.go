package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/attach"
	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/slashcmd"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
)

// commandLineTimeout ends a custom command's !`command` line (and all it
// started) after this long.
const commandLineTimeout = 60 * time.Second

// CommandPrompt returns the prompt of the custom command cmd for the
// arguments typed after its name, as a turn of the session sessionID (""
// for one not created yet) in the workspace ws gets it: the arguments
// substituted, then each !`command` line of the body run and replaced by
// its output, and each file an @path names attached.
//
// A command line runs only if the permission policy of such a turn
// allows it outright, as it would allow run_command: the user's and the
// project's rules, the mode, the shell parsing that judges each simple
// command, the sandbox's gate, with the command's allowed-tools as allow
// rules for this expansion only (deny rules still win). One that would
// ask or is denied refuses the whole prompt before anything ran, with an
// error matching slashcmd.ErrRefused that says how to allow it. Allowed
// lines run as run_command's commands do: in the session's sandbox, with
// the scrubbed environment, in the workspace, with a timeout, their
// process group killed. Files are read as read_file reads them: within
// the workspace and its added directories, read deny rules applied.
func (a *App) CommandPrompt(ctx context.Context, ws, sessionID string, cmd slashcmd.Command, args string) (string, error) {
	body, err := cmd.Expand(args)
	if err != nil {
		return "", err
	}
	x := &commandExpansion{a: a, cmd: cmd, sess: &protocol.Session{ID: sessionID, Workspace: ws}}
	if x.sess.ID == "" {
		x.sess.ID = "commands" // names the sandbox's temp dir only
	}
	x.sessionID = sessionID
	prompt, err := slashcmd.Expander{Check: x.check, Run: x.run, Attach: x.attach}.Expand(ctx, body)
	if err != nil {
		return "", err
	}
	if prompt = strings.TrimSpace(prompt); prompt == "" {
		return "", fmt.Errorf("command /%s has an empty prompt once its lines ran", cmd.Name)
	}
	return prompt, nil
}

// commandExpansion is what expanding one command needs, made when first
// needed: a body without markers or references costs nothing.
type commandExpansion struct {
	a         *App
	cmd       slashcmd.Command
	sess      *protocol.Session
	sessionID string
	ws        *tools.Workspace
	policy    *permission.Policy
	runner    *execx.Runner
}

// setup builds the workspace (with its added directories) and the
// policy, with the command's allowed-tools as grants.
func (x *commandExpansion) setup(ctx context.Context) error {
	if x.policy != nil {
		return nil
	}
	roots, err := x.a.roots(ctx, x.sess)
	if err != nil {
		return err
	}
	if x.ws, err = tools.NewWorkspace(x.sess.Workspace, roots...); err != nil {
		return err
	}
	p, err := x.a.WorkspacePolicy(ctx, x.sess.Workspace, x.sessionID, x.a.modeFor(x.sessionID), false)
	if err != nil {
		return err
	}
	var grants []permission.Grant
	for _, t := range x.cmd.AllowedTools {
		grants = append(grants, permission.Grant{Rule: t, Origin: "command /" + x.cmd.Name + " (allowed-tools)"})
	}
	if x.policy, err = p.WithGrants(grants...); err != nil {
		return err
	}
	return nil
}

// check decides a command line as run_command's call would be decided;
// anything but an allow is an error telling how to allow it.
func (x *commandExpansion) check(ctx context.Context, line string) error {
	if err := x.setup(ctx); err != nil {
		return err
	}
	if x.runner == nil {
		r, err := x.a.commands(ctx, x.sess)
		if err != nil {
			return err
		}
		x.runner = r
	}
	d := x.policy.Decide(permission.Request{Tool: permission.CommandTool, Risk: string(tools.RiskExecute), Command: line,
		Workspace: x.ws.Root(), Roots: x.ws.Allowed(), Home: UserHome()})
	d = agent.SandboxGate(d, x.policy.Mode(), x.runner, false, "")
	switch d.Action {
	case permission.Allow:
		return nil
	case permission.Deny:
		return fmt.Errorf("/%s's line !`%s` is denied: %s (%s)", x.cmd.Name, line, d.Reason, d.Source)
	}
	how := "no rule can allow it"
	if inner, ok := strings.CutPrefix(d.Suggest, permission.CommandTool+"("); ok {
		how = fmt.Sprintf("to run it, add Bash(%s to the allowed-tools of %s, or allow %s in your permission settings",
			inner, x.cmd.Path, d.Suggest)
	}
	return fmt.Errorf("/%s's line !`%s` would need approval (%s), and a command's lines run only when allowed beforehand; %s",
		x.cmd.Name, line, d.Reason, how)
}

// run runs an allowed command line with run_command's executor and
// returns its output, with the exit code when it failed.
func (x *commandExpansion) run(ctx context.Context, line string) (string, error) {
	res, err := x.runner.Run(ctx, execx.Command{Script: line, Dir: x.ws.Root(), Env: execx.Env(os.Environ(), execx.DefaultEnvAllow),
		Timeout: commandLineTimeout, MaxOutput: builtin.MaxCommandOutput})
	if err != nil {
		return "", err
	}
	out := strings.TrimRight(strings.ToValidUTF8(res.Output, "\uFFFD"), "\n")
	switch {
	case res.TimedOut:
		out += fmt.Sprintf("\n[timed out after %s and was killed]", commandLineTimeout)
	case res.ExitCode != 0:
		out += fmt.Sprintf("\n[exit code %d]", res.ExitCode)
	}
	return strings.TrimPrefix(out, "\n"), nil
}

// attach reads a referenced file as read_file would and returns its
// block.
func (x *commandExpansion) attach(ctx context.Context, path string) (string, string, error) {
	if err := x.setup(ctx); err != nil {
		return "", "", err
	}
	abs, rel, err := x.ws.Resolve(path)
	if err != nil {
		return "", "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("no file %s in the workspace: %w", rel, fs.ErrNotExist)
		}
		return "", "", err
	}
	if fi.IsDir() {
		return "", "", fmt.Errorf("%s is a directory; a reference names a file", rel)
	}
	args, _ := json.Marshal(map[string]string{"path": path})
	d := x.policy.Decide(permission.Request{Tool: "read_file", Risk: string(tools.RiskRead), Args: args, Paths: []string{abs},
		Workspace: x.ws.Root(), Roots: x.ws.Allowed(), Home: UserHome()})
	if d.Action != permission.Allow {
		return "", "", fmt.Errorf("reading %s is not allowed: %s (%s)", rel, d.Reason, d.Source)
	}
	f, err := attach.Read(abs, rel)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", rel, err)
	}
	return f.Block, f.Rel, nil
}
