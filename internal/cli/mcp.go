package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/mcp"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

func newMCPCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP servers, or serve mx-claw over MCP",
		Long: `MCP servers give the model more tools, named mcp__<server>__<tool>. They come
from "mcpServers" in $MX_CLAW_HOME/settings.json and from a workspace's .mcp.json
(Claude Code's format). A project's servers start only in a trusted workspace,
each once you approve it with ` + "`mx-claw mcp approve NAME`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("say what to do: `mx-claw mcp list`, `get NAME`, `add NAME COMMAND…`, `remove NAME`, `approve NAME`, `test NAME` or `serve`")
		},
	}
	var cwd string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers of this workspace and whether they may start",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpList(cmd.Context(), stdio, cwd, asJSON)
		},
	}
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one MCP server's entry (secret values hidden)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpGet(cmd.Context(), stdio, cwd, args[0], asJSON)
		},
	}
	for _, c := range []*cobra.Command{list, get} {
		c.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	}
	cmd.AddCommand(list, get, newMCPAddCmd(stdio), newMCPRemoveCmd(stdio), newMCPApproveCmd(stdio, true),
		newMCPApproveCmd(stdio, false), newMCPTestCmd(stdio), newMCPServeCmd(stdio))
	return cmd
}

// serverView is a server as `mcp list` and `mcp get` show it: values that
// may be secrets are hidden.
type serverView struct {
	Name      string            `json:"name"`
	Source    mcp.Source        `json:"source"`
	Path      string            `json:"path"`
	Type      mcp.Transport     `json:"type"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	URL       string            `json:"url,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Variables []string          `json:"variables,omitempty"`
	// Status is "ready", "needs approval", "untrusted workspace" or
	// "shadowed"; Reason says more.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Log    string `json:"log,omitempty"`
}

func viewServer(home string, s *mcp.Server, status, reason string) serverView {
	v := serverView{Name: s.Name, Source: s.Source, Path: s.Path, Type: s.Transport, Command: s.Command, Args: s.Args,
		URL: s.URL, Env: hideSecrets(s.Env), Headers: hideSecrets(s.Headers), Variables: s.Variables(), Status: status, Reason: reason}
	if s.Transport == mcp.TransportStdio {
		v.Log = mcp.LogPath(home, s.Name)
	}
	return v
}

// hideSecrets shows a value that only refers to variables, or whose name
// does not look secret; others are "<hidden>".
func hideSecrets(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch {
		case strings.Contains(v, "${"):
			out[k] = v
		case execx.Secret(k) || strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Cookie"):
			out[k] = "<hidden>"
		default:
			out[k] = v
		}
	}
	return out
}

// workspaceServers returns the views of every server of the workspace,
// the problems of malformed entries, and the app (the caller closes it).
func workspaceServers(ctx context.Context, cwd string) (*app.App, string, *mcp.Config, []serverView, error) {
	ws, err := workspaceDir(cwd)
	if err != nil {
		return nil, "", nil, nil, err
	}
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return nil, "", nil, nil, err
	}
	cfg, err := a.MCPConfig(ctx, ws)
	if err != nil {
		a.Close()
		return nil, "", nil, nil, usageErr(err)
	}
	var views []serverView
	for _, s := range cfg.Servers {
		views = append(views, viewServer(a.Home, s, "ready", ""))
	}
	for _, h := range cfg.Held {
		status := "needs approval"
		switch {
		case h.Shadowed:
			status = "shadowed"
		case h.Untrusted:
			status = "untrusted workspace"
		}
		views = append(views, viewServer(a.Home, h.Server, status, h.Reason))
	}
	return a, ws, cfg, views, nil
}

func mcpList(ctx context.Context, stdio IO, cwd string, asJSON bool) error {
	a, _, cfg, views, err := workspaceServers(ctx, cwd)
	if err != nil {
		return err
	}
	defer a.Close()
	var problems []string
	for _, p := range cfg.Problems {
		problems = append(problems, p.Error())
	}
	if asJSON {
		if views == nil {
			views = []serverView{}
		}
		return writeJSON(stdio.Out, map[string]any{"servers": views, "problems": problems})
	}
	if len(views) == 0 && len(problems) == 0 {
		fmt.Fprintln(stdio.Out, "No MCP servers. Add one with `mx-claw mcp add NAME COMMAND [ARGS…]` or in a project's .mcp.json.")
		return nil
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tSTATUS\tSERVER")
	for _, v := range views {
		what := v.URL
		if v.Type == mcp.TransportStdio {
			what = strings.Join(append([]string{v.Command}, v.Args...), " ")
		} else {
			what = string(v.Type) + " " + what
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termsafe.Sanitize(v.Name), v.Source, v.Status, termsafe.Sanitize(oneLine(what, 70)))
	}
	tw.Flush()
	for _, v := range views {
		if v.Reason != "" {
			fmt.Fprintf(stdio.Out, "%s: %s\n", termsafe.Sanitize(v.Name), termsafe.Sanitize(v.Reason))
		}
	}
	for _, p := range problems {
		fmt.Fprintf(stdio.Err, "problem: %s\n", termsafe.Sanitize(p))
	}
	return nil
}

func mcpGet(ctx context.Context, stdio IO, cwd, name string, asJSON bool) error {
	a, _, _, views, err := workspaceServers(ctx, cwd)
	if err != nil {
		return err
	}
	defer a.Close()
	for _, v := range views {
		if v.Name != name {
			continue
		}
		if asJSON {
			return writeJSON(stdio.Out, v)
		}
		tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
		row := func(k, val string) {
			if val != "" {
				fmt.Fprintf(tw, "%s:\t%s\n", k, termsafe.Sanitize(val))
			}
		}
		row("name", v.Name)
		row("source", fmt.Sprintf("%s (%s)", v.Source, v.Path))
		row("status", v.Status)
		row("why", v.Reason)
		row("type", string(v.Type))
		row("command", v.Command)
		if len(v.Args) > 0 {
			quoted, _ := json.Marshal(v.Args)
			row("args", string(quoted))
		}
		row("url", v.URL)
		for _, k := range sortedMapKeys(v.Env) {
			row("env", k+"="+v.Env[k])
		}
		for _, k := range sortedMapKeys(v.Headers) {
			row("header", k+": "+v.Headers[k])
		}
		row("reads", strings.Join(v.Variables, ", "))
		row("log", v.Log)
		return tw.Flush()
	}
	return usagef("no MCP server named %q here; `mx-claw mcp list` shows them", name)
}

func newMCPAddCmd(stdio IO) *cobra.Command {
	var scope, transport, cwd string
	var env, headers []string
	cmd := &cobra.Command{
		Use:   "add [flags] NAME COMMAND [ARGS...] | add --transport http NAME URL",
		Short: "Add an MCP server to your settings (or --scope project: to .mcp.json)",
		Long: `Adds a server entry. Flags come before NAME; everything after the command is its
arguments. Values may refer to your environment as ${VAR} or ${VAR:-default},
which is better than writing a secret into the file.

  mx-claw mcp add fs npx -y @modelcontextprotocol/server-filesystem ~/notes
  mx-claw mcp add -e GITHUB_PERSONAL_ACCESS_TOKEN='${GITHUB_TOKEN}' github npx -y @modelcontextprotocol/server-github
  mx-claw mcp add --transport http -H 'Authorization: Bearer ${API_TOKEN}' api https://example.com/mcp`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpAdd(stdio, scope, transport, cwd, env, headers, args)
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	fl.StringVarP(&scope, "scope", "s", "user", "where to add it: user (settings.json) or project (.mcp.json of the workspace)")
	fl.StringVarP(&transport, "transport", "t", "", "stdio, http or sse (default: http for a URL, else stdio)")
	fl.StringArrayVarP(&env, "env", "e", nil, "an environment variable for a stdio server, KEY=VALUE (repeatable)")
	fl.StringArrayVarP(&headers, "header", "H", nil, "an HTTP header, 'Name: value' (repeatable)")
	fl.StringVar(&cwd, "cwd", "", "workspace directory for --scope project (default: the current directory)")
	return cmd
}

func mcpAdd(stdio IO, scope, transport, cwd string, envFlags, headerFlags, args []string) error {
	name, target, rest := args[0], args[1], args[2:]
	if err := mcp.CheckName(name); err != nil {
		return usageErr(err)
	}
	if transport == "" {
		transport = "stdio"
		if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
			transport = "http"
		}
	}
	entry := map[string]any{}
	switch transport {
	case "stdio":
		entry["command"] = target
		entry["args"] = append([]string{}, rest...)
		if len(headerFlags) > 0 {
			return usagef("--header is for http and sse servers")
		}
		if len(envFlags) > 0 {
			env := map[string]string{}
			for _, kv := range envFlags {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--env %q: want KEY=VALUE", kv)
				}
				env[k] = v
			}
			entry["env"] = env
		}
	case "http", "sse":
		if len(rest) > 0 {
			return usagef("an %s server takes a URL and no arguments", transport)
		}
		if len(envFlags) > 0 {
			return usagef("--env is for stdio servers")
		}
		entry["type"] = transport
		entry["url"] = target
		if len(headerFlags) > 0 {
			h := map[string]string{}
			for _, kv := range headerFlags {
				k, v, ok := strings.Cut(kv, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return usagef("--header %q: want 'Name: value'", kv)
				}
				h[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			entry["headers"] = h
		}
	default:
		return usagef("--transport %q: want stdio, http or sse", transport)
	}
	raw, _ := json.Marshal(entry)
	f, err := openServerFile(scope, cwd)
	if err != nil {
		return err
	}
	// The entry must read back as a usable server.
	check, _ := json.Marshal(map[string]json.RawMessage{name: raw})
	if _, problems := mcp.ParseServers(check, mcp.SourceUser, f.path); len(problems) > 0 {
		return usageErr(problems[0])
	}
	if _, exists := f.servers.vals[name]; exists {
		return usagef("%s already has an MCP server named %q; remove it first (`mx-claw mcp remove %s`)", f.path, name, name)
	}
	f.servers.set(name, raw)
	if err := f.save(); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Out, "Added MCP server %q to %s.\n", name, f.path)
	env, _ := entry["env"].(map[string]string)
	for k, v := range env {
		if execx.Secret(k) && !strings.Contains(v, "${") {
			fmt.Fprintf(stdio.Err, "note: %s is written into %s as it is; `-e %s='${VAR}'` would read it from your environment instead.\n", k, f.path, k)
		}
	}
	if f.project {
		fmt.Fprintf(stdio.Out, "It starts once the workspace is trusted and you approve it: `mx-claw mcp approve %s`.\n", name)
	}
	return nil
}

// openServerFile opens the user's settings or the workspace's .mcp.json.
func openServerFile(scope, cwd string) (*serverFile, error) {
	switch scope {
	case "user", "":
		home, err := config.Home()
		if err != nil {
			return nil, usageErr(err)
		}
		f, err := openUserServers(home)
		if err != nil {
			return nil, usageErr(err)
		}
		return f, nil
	case "project":
		ws, err := workspaceDir(cwd)
		if err != nil {
			return nil, err
		}
		f, err := openProjectServers(ws)
		if err != nil {
			return nil, usageErr(err)
		}
		return f, nil
	}
	return nil, usagef("--scope %q: want user or project", scope)
}

func newMCPRemoveCmd(stdio IO) *cobra.Command {
	var scope, cwd string
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server from your settings or the workspace's .mcp.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			scopes := []string{scope}
			if scope == "" {
				scopes = []string{"user", "project"}
			}
			var found []*serverFile
			for _, sc := range scopes {
				f, err := openServerFile(sc, cwd)
				if err != nil {
					return err
				}
				if _, ok := f.servers.vals[name]; ok {
					found = append(found, f)
				}
			}
			switch len(found) {
			case 0:
				return usagef("no MCP server named %q in your settings or this workspace's .mcp.json", name)
			case 2:
				return usagef("both your settings and .mcp.json have a server named %q; say which with --scope user or --scope project", name)
			}
			f := found[0]
			f.servers.remove(name)
			if err := f.save(); err != nil {
				return err
			}
			if f.project {
				if home, err := config.Home(); err == nil {
					ws, _ := workspaceDir(cwd)
					_, _ = mcp.Revoke(home, ws, name)
				}
			}
			_, err := fmt.Fprintf(stdio.Out, "Removed MCP server %q from %s.\n", name, f.path)
			return err
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "", "user or project (default: wherever it is)")
	cmd.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	return cmd
}

// newMCPApproveCmd is `mcp approve NAME` (approve true) or `mcp revoke
// NAME`: the user's decision about a project's server.
func newMCPApproveCmd(stdio IO, approve bool) *cobra.Command {
	var cwd string
	use, short := "approve NAME", "Allow a server of this workspace's .mcp.json to start (as it is written now)"
	if !approve {
		use, short = "revoke NAME", "Withdraw the approval of a server of this workspace's .mcp.json"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := workspaceDir(cwd)
			if err != nil {
				return err
			}
			a, err := openApp(cmd.Context(), app.Options{})
			if err != nil {
				return err
			}
			defer a.Close()
			name := args[0]
			if !approve {
				ok, err := mcp.Revoke(a.Home, ws, name)
				if err != nil {
					return err
				}
				if !ok {
					return usagef("no approval of an MCP server %q for %s", name, ws)
				}
				_, err = fmt.Fprintf(stdio.Out, "Revoked: MCP server %q of %s no longer starts.\n", name, ws)
				return err
			}
			return mcpApprove(cmd.Context(), stdio, a, ws, name)
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	return cmd
}

func mcpApprove(ctx context.Context, stdio IO, a *app.App, ws, name string) error {
	servers, problems := mcp.LoadProjectFile(ws)
	var s *mcp.Server
	for _, c := range servers {
		if c.Name == name {
			s = c
		}
	}
	if s == nil {
		for _, p := range problems {
			var ce *mcp.ConfigError
			if errors.As(p, &ce) && (ce.Server == name || ce.Server == "") {
				return usageErr(p)
			}
		}
		return usagef("%s/%s has no MCP server named %q", ws, mcp.ProjectFile, name)
	}
	if err := mcp.Approve(a.Home, ws, s, time.Now()); err != nil {
		return err
	}
	out := stdio.Out
	fmt.Fprintf(out, "Approved MCP server %q of %s:\n", name, s.Path)
	fmt.Fprintf(out, "  %s\n", termsafe.Sanitize(s.Describe()))
	if len(s.Env) > 0 {
		fmt.Fprintf(out, "  it sets: %s\n", termsafe.Sanitize(strings.Join(sortedMapKeys(s.Env), ", ")))
	}
	if vars := s.Variables(); len(vars) > 0 {
		fmt.Fprintf(out, "  it reads from your environment: %s\n", termsafe.Sanitize(strings.Join(vars, ", ")))
	}
	fmt.Fprintln(out, "The approval lapses if the entry changes. `mx-claw mcp revoke "+name+"` withdraws it.")
	if trusted, err := a.Trusted(ctx, ws); err == nil && !trusted {
		fmt.Fprintln(out, "The workspace is not trusted yet: its servers start once it is (run mx-claw there with --trust).")
	}
	return nil
}

func newMCPTestCmd(stdio IO) *cobra.Command {
	var cwd, tool, args string
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Start an MCP server, list its tools (and call one with --call), then stop it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return mcpTest(cmd.Context(), stdio, cwd, a[0], tool, args)
		},
	}
	cmd.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	cmd.Flags().StringVar(&tool, "call", "", "call this tool (its name on the server) after listing")
	cmd.Flags().StringVar(&args, "args", "{}", "the JSON arguments of --call")
	return cmd
}

func mcpTest(ctx context.Context, stdio IO, cwd, name, tool, args string) error {
	a, ws, cfg, views, err := workspaceServers(ctx, cwd)
	if err != nil {
		return err
	}
	defer a.Close()
	s := cfg.Find(name)
	if s == nil {
		for _, v := range views {
			if v.Name == name {
				return usagef("MCP server %q may not start: %s", name, v.Reason)
			}
		}
		return usagef("no MCP server named %q here; `mx-claw mcp list` shows them", name)
	}
	start := time.Now()
	specs, problems, err := a.MCP().List(ctx, ws, s, cfg.Settings)
	if err != nil {
		fmt.Fprintf(stdio.Err, "%s\n", termsafe.Sanitize(err.Error()))
		if s.Transport == mcp.TransportStdio {
			printLogTail(stdio, mcp.LogPath(a.Home, s.Name))
		}
		return &exitError{code: ExitFailed, err: err, quiet: true}
	}
	fmt.Fprintf(stdio.Out, "MCP server %q answered in %s with %d tools:\n", name, time.Since(start).Round(time.Millisecond), len(specs))
	for _, sp := range specs {
		mark := ""
		if sp.ReadOnlyHint {
			mark = " (read-only hint"
			if cfg.Settings.TrustsReadOnly(name) {
				mark += ", trusted: runs without asking"
			}
			mark += ")"
		}
		fmt.Fprintf(stdio.Out, "  %s%s\n", sp.Name, mark)
	}
	for _, p := range problems {
		fmt.Fprintf(stdio.Err, "left out: %s\n", termsafe.Sanitize(p))
	}
	if tool == "" {
		return nil
	}
	if !json.Valid([]byte(args)) {
		return usagef("--args is not valid JSON")
	}
	res, err := a.MCP().Call(ctx, ws, s, cfg.Settings, tool, json.RawMessage(args))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdio.Out, termsafe.Sanitize(res.Content))
	if res.IsError {
		return &exitError{code: ExitFailed, err: fmt.Errorf("the tool reported an error"), quiet: true}
	}
	return nil
}

// printLogTail prints the last lines of a server's log.
func printLogTail(stdio IO, path string) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(data, nil)), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	fmt.Fprintf(stdio.Err, "last lines of %s:\n", path)
	for _, l := range lines {
		fmt.Fprintf(stdio.Err, "  %s\n", termsafe.Sanitize(l))
	}
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
