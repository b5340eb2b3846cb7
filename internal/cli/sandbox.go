package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/sandbox"
)

// AddSandboxFlag registers --sandbox MODE on a command's flags (run, the
// REPL, approve and reject, serve); SandboxMode turns its value into
// app.Options.SandboxMode.
func AddSandboxFlag(fl *pflag.FlagSet, value *string) {
	fl.StringVar(value, "sandbox", "", "command sandbox: workspace-write, read-only or off (default: settings, else workspace-write)")
}

// SandboxMode parses the --sandbox flag's value; "" leaves the mode to the
// settings.
func SandboxMode(value string) (sandbox.Mode, error) {
	if value == "" {
		return "", nil
	}
	m, err := sandbox.ParseMode(value)
	if err != nil {
		return "", usagef("--sandbox %q: want workspace-write, read-only or off", value)
	}
	return m, nil
}

func newSandboxCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Show the command sandbox",
		Args:  cobra.NoArgs,
	}
	var jsonOut bool
	var cwd, mode string
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the sandbox commands run in here: backend, writable roots, protected paths, network",
		Long: `Show the sandbox the model's commands run in for this workspace: the backend
in force (bwrap, landlock, seatbelt or none) and whether it is enforced, the
mode, the writable roots, the protected paths, the network and the resource
limits. With --json, one JSON object.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return sandboxStatus(stdio.Out, cwd, mode, jsonOut)
		},
	}
	status.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object")
	status.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	AddSandboxFlag(status.Flags(), &mode)
	cmd.AddCommand(status)
	return cmd
}

// sandboxReport is `mx-claw sandbox status --json`.
type sandboxReport struct {
	sandbox.Status
	Mode           sandbox.Mode   `json:"mode"`
	ModeOrigin     string         `json:"modeOrigin"`
	Network        bool           `json:"network"`
	AllowedHosts   []string       `json:"allowedHosts"`
	WritableRoots  []string       `json:"writableRoots"`
	ProtectedPaths []string       `json:"protectedPaths"`
	Limits         sandbox.Limits `json:"limits"`
}

func sandboxStatus(w io.Writer, cwd, modeFlag string, jsonOut bool) error {
	mode, err := SandboxMode(modeFlag)
	if err != nil {
		return err
	}
	ws, err := workspaceDir(cwd)
	if err != nil {
		return err
	}
	home, err := config.Home()
	if err != nil {
		return usageErr(err)
	}
	cfg, err := loadSandboxConfig(home, ws, mode)
	if err != nil {
		return usageErr(err)
	}
	m := app.NewSandbox()
	defer m.Close()
	r := sandboxReport{Status: m.Status(), Mode: cfg.Mode, ModeOrigin: cfg.ModeOrigin, Network: cfg.Network,
		AllowedHosts: append([]string{}, cfg.AllowedHosts...), ProtectedPaths: sandbox.ProtectedPaths(), Limits: cfg.Limits}
	switch cfg.Mode {
	case sandbox.ModeOff:
		r.Enforced = false
		r.WritableRoots = []string{}
	case sandbox.ModeReadOnly:
		r.WritableRoots = []string{"$TMPDIR (per session)"}
	default:
		r.WritableRoots = append([]string{ws, "$TMPDIR (per session)"}, cfg.WritableRoots...)
	}
	if jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-15s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	enforced := "enforced"
	if !r.Enforced {
		enforced = "NOT enforced"
	}
	line("Backend", "%s (%s): %s", r.Backend, enforced, r.Reason)
	line("Mode", "%s (from %s)", r.Mode, r.ModeOrigin)
	switch {
	case r.Network:
		line("Network", "on")
	case len(r.AllowedHosts) > 0:
		line("Network", "only through a local proxy, to %s", strings.Join(r.AllowedHosts, ", "))
	default:
		line("Network", "off")
	}
	line("Writable", "%s", strings.Join(r.WritableRoots, ", "))
	line("Protected", "%s (read-only; absent ones cannot be created)", strings.Join(r.ProtectedPaths, ", "))
	line("Limits", "%s", r.Limits)
	line("Processes", "%s", r.Processes)
	for _, d := range r.Details {
		line("Found", "%s", d)
	}
	if !r.Enforced && r.Mode != sandbox.ModeOff {
		fmt.Fprintln(w, "Without a sandbox, commands that are not read-only ask for approval in every mode but bypass.")
	}
	return nil
}

// loadSandboxConfig reads the user's and the workspace's settings and
// resolves the sandbox configuration, as a session's turns do.
func loadSandboxConfig(home, ws string, mode sandbox.Mode) (sandbox.Config, error) {
	user, err := permission.LoadSettings(permission.UserSettingsPath(home))
	if err != nil {
		return sandbox.Config{}, err
	}
	project, err := permission.LoadProjectSettings(ws, true)
	if err != nil {
		return sandbox.Config{}, err
	}
	us, err := sandbox.ParseSettings(user.Path, user.Other["sandbox"])
	if err != nil {
		return sandbox.Config{}, err
	}
	ps, err := sandbox.ParseSettings(project.Path, project.Other["sandbox"])
	if err != nil {
		return sandbox.Config{}, err
	}
	return sandbox.Resolve(us, ps, mode, app.UserHome()), nil
}

// doctorSandbox is doctor's sandbox line.
func doctorSandbox(w io.Writer) {
	m := app.NewSandbox()
	defer m.Close()
	st := m.Status()
	state := "enforced"
	if !st.Enforced {
		state = "NOT enforced"
	}
	fmt.Fprintf(w, "%-15s %s (%s): %s\n", "Sandbox:", st.Backend, state, st.Reason)
}
