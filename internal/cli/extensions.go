package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/memory"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/plugins"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/safefile"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/slashcmd"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
	"github.com/mx-claw/mx-claw/internal/tui"
)

// The commands of DESIGN §9: mx-claw memory, skills and plugins. They
// work on the home's files; only listing skills needs the store (to know
// whether the workspace is trusted).

func newMemoryCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Review what mx-claw was asked to remember",
		Long: `mx-claw keeps long-term memory in Markdown files: $MX_CLAW_HOME/memory/USER.md
(about you) and memory/MEMORY.md (facts and conventions), and in a trusted
workspace .mx-claw/MEMORY.md. New sessions start with them in the system
prompt (8 KiB each at most).

When you ask for something to be remembered ("remember that …", "from now
on …", "always …", "记住…", "以后…"), it becomes a candidate. Nothing reaches a
prompt before you accept it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listCandidates(stdio.Out, false)
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "candidates",
		Short: "List the candidates waiting for review",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listCandidates(stdio.Out, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	accept := &cobra.Command{
		Use:   "accept ID",
		Short: "Add a candidate to its memory file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := candidates()
			if err != nil {
				return err
			}
			path, err := c.Accept(args[0])
			if err != nil {
				return candidateErr(err)
			}
			_, err = fmt.Fprintf(stdio.Out, "Added to %s; new sessions start with it.\n", path)
			return err
		},
	}
	reject := &cobra.Command{
		Use:   "reject ID",
		Short: "Drop a candidate",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := candidates()
			if err != nil {
				return err
			}
			if err := c.Reject(args[0]); err != nil {
				return candidateErr(err)
			}
			_, err = fmt.Fprintf(stdio.Out, "Dropped %s.\n", args[0])
			return err
		},
	}
	var text, file string
	edit := &cobra.Command{
		Use:   "edit ID [--text TEXT] [--file user|memory|project]",
		Short: "Change a candidate's text or the file it goes to",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if text == "" && file == "" {
				return usagef("say what to change: --text or --file")
			}
			c, err := candidates()
			if err != nil {
				return err
			}
			cand, err := c.Edit(args[0], text, file)
			if err != nil {
				return candidateErr(err)
			}
			_, err = fmt.Fprintf(stdio.Out, "%s → %s: %s\n", cand.ID, cand.File, termsafe.Sanitize(cand.Text))
			return err
		},
	}
	edit.Flags().StringVar(&text, "text", "", "the line to remember instead")
	edit.Flags().StringVar(&file, "file", "", "where it goes: user (USER.md), memory (MEMORY.md) or project (the workspace's .mx-claw/MEMORY.md)")
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the memory files a new session here would start with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return showMemory(cmd.Context(), stdio.Out)
		},
	}
	cmd.AddCommand(list, accept, reject, edit, show)
	return cmd
}

// candidates returns the home's candidate list.
func candidates() (memory.Candidates, error) {
	home, err := config.Home()
	if err != nil {
		return memory.Candidates{}, usageErr(err)
	}
	return memory.Candidates{Home: home}, nil
}

// candidateErr makes an unknown id a usage error that says where to look.
func candidateErr(err error) error {
	if errors.Is(err, memory.ErrNoCandidate) {
		return usagef("%v; `mx-claw memory candidates` lists them", err)
	}
	return err
}

func listCandidates(w io.Writer, asJSON bool) error {
	c, err := candidates()
	if err != nil {
		return err
	}
	list, warnings := c.List()
	if asJSON {
		if list == nil {
			list = []memory.Candidate{}
		}
		return writeJSON(w, list)
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Sanitize(warn))
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No memory candidates.")
		return err
	}
	for _, cand := range list {
		fmt.Fprintf(w, "%s  → %s  %s\n", cand.ID, cand.File, termsafe.Sanitize(cand.Text))
		fmt.Fprintf(w, "    from %q (session %s, %s)\n", oneLine(termsafe.Sanitize(cand.Quote), 100), cand.SessionID,
			cand.CreatedAt.Local().Format(time.DateTime))
	}
	_, err = fmt.Fprintln(w, "\nAccept with `mx-claw memory accept ID`, drop with `mx-claw memory reject ID`, change with `mx-claw memory edit ID --text …`.")
	return err
}

func showMemory(ctx context.Context, w io.Writer) error {
	ws, err := workspaceDir("")
	if err != nil {
		return err
	}
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	trusted, _ := a.Trusted(ctx, ws)
	notes, warnings := memory.LoadNotes(memory.NoteOptions{Home: a.Home, Workspace: ws, Trusted: trusted})
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Sanitize(warn))
	}
	if len(notes) == 0 {
		fmt.Fprintf(w, "No memory yet (%s/%s/USER.md and MEMORY.md are empty or missing).\n", a.Home, memory.Dir)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "===== %s (%s, %d bytes) =====\n%s\n\n", n.Label, n.Path, n.Size, termsafe.Sanitize(n.Text))
	}
	return nil
}

func newSkillsCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List skills and review the ones the model proposed",
		Long: `Skills are folders with a SKILL.md (YAML front matter with name and
description, then instructions), in Claude Code's and the Agent Skills format:
$MX_CLAW_HOME/skills/active/<name>/, and in a trusted workspace .mx-claw/skills/,
.claude/skills/ and .agents/skills/, and enabled plugins' skills.

After a turn that did real work through several tool calls, mx-claw may ask
the model to write a skill for it. Such proposals wait in
$MX_CLAW_HOME/skills/proposed/ and are never loaded until you accept them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listSkills(cmd.Context(), stdio.Out, "", false)
		},
	}
	var asJSON bool
	var cwd string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the skills a new session here may load",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listSkills(cmd.Context(), stdio.Out, cwd, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	var propJSON bool
	proposed := &cobra.Command{
		Use:   "proposed [NAME]",
		Short: "List the proposed skills, or print one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := skillStore()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return showProposal(stdio.Out, st, args[0])
			}
			return listProposals(stdio.Out, st, propJSON)
		},
	}
	proposed.Flags().BoolVar(&propJSON, "json", false, "print JSON")
	accept := &cobra.Command{
		Use:   "accept NAME",
		Short: "Make a proposed skill active",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := skillStore()
			if err != nil {
				return err
			}
			s, err := st.Accept(args[0])
			if err != nil {
				return skillErr(err)
			}
			_, err = fmt.Fprintf(stdio.Out, "Skill %s is active (%s); new sessions can load it.\n", s.Name, s.Dir)
			return err
		},
	}
	reject := &cobra.Command{
		Use:   "reject NAME",
		Short: "Delete a proposed skill",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := skillStore()
			if err != nil {
				return err
			}
			if err := st.Reject(args[0]); err != nil {
				return skillErr(err)
			}
			_, err = fmt.Fprintf(stdio.Out, "Deleted the proposed skill %s.\n", args[0])
			return err
		},
	}
	cmd.AddCommand(list, proposed, accept, reject)
	return cmd
}

func skillStore() (skills.Store, error) {
	home, err := config.Home()
	if err != nil {
		return skills.Store{}, usageErr(err)
	}
	return skills.Store{Dir: home + "/" + app.SkillsDirName}, nil
}

func skillErr(err error) error {
	if errors.Is(err, skills.ErrNotFound) || errors.Is(err, skills.ErrExists) {
		return usagef("%v; `mx-claw skills proposed` lists the proposals", err)
	}
	return err
}

func listSkills(ctx context.Context, w io.Writer, cwd string, asJSON bool) error {
	ws, err := workspaceDir(cwd)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	found, warnings := a.Skills(ctx, ws)
	if asJSON {
		if found == nil {
			found = []skills.Skill{}
		}
		return writeJSON(w, found)
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Sanitize(warn))
	}
	if len(found) == 0 {
		_, err := fmt.Fprintf(w, "No skills. Put them in %s/<name>/SKILL.md.\n", a.SkillStore().Active())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
	for _, s := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Source, oneLine(termsafe.Sanitize(s.Description), 70))
	}
	return tw.Flush()
}

func listProposals(w io.Writer, st skills.Store, asJSON bool) error {
	list, warnings := st.Proposals()
	if asJSON {
		if list == nil {
			list = []skills.Proposal{}
		}
		return writeJSON(w, list)
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Sanitize(warn))
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No proposed skills.")
		return err
	}
	for _, p := range list {
		fmt.Fprintf(w, "%s  %s\n", p.Name, oneLine(termsafe.Sanitize(p.Description), 80))
		fmt.Fprintf(w, "    from session %s, %d tool calls, %s: %q\n", p.Provenance.SessionID, p.Provenance.Steps,
			p.Provenance.CreatedAt.Local().Format(time.DateTime), oneLine(termsafe.Sanitize(p.Provenance.Request), 80))
	}
	_, err := fmt.Fprintln(w, "\nRead one with `mx-claw skills proposed NAME`; `mx-claw skills accept NAME` makes it active, `reject` deletes it.")
	return err
}

func showProposal(w io.Writer, st skills.Store, name string) error {
	p, err := st.Proposal(name)
	if err != nil {
		return skillErr(err)
	}
	data, err := safefile.ReadInTree(p.Dir, skills.FileName, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Proposed skill %s (%s)\nfrom session %s, turn %s: %q\n\n", p.Name, p.Dir, p.Provenance.SessionID,
		p.Provenance.TurnID, oneLine(termsafe.Sanitize(p.Provenance.Request), 120))
	_, err = io.WriteString(w, termsafe.Sanitize(string(data)))
	return err
}

func newPluginsCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List, enable and disable plugins",
		Long: `A plugin is a folder under $MX_CLAW_HOME/plugins/ with a manifest
(.claude-plugin/plugin.json, Claude Code's layout, or plugin.json) naming its
skills, slash commands, hooks and MCP servers. A plugin acts only once you
enable it; new sessions pick up the change.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listPlugins(stdio.Out, false)
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the installed plugins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listPlugins(stdio.Out, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	toggle := func(use, short string, on bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " NAME",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				home, err := config.Home()
				if err != nil {
					return usageErr(err)
				}
				set := plugins.Disable
				if on {
					set = plugins.Enable
				}
				p, err := set(home, args[0])
				if errors.Is(err, plugins.ErrNotFound) {
					return usageErr(err)
				}
				if err != nil {
					return err
				}
				state := "disabled"
				if on {
					state = "enabled; new sessions use its " + strings.Join(parts(p), ", ")
				}
				_, err = fmt.Fprintf(stdio.Out, "Plugin %s %s.\n", p.Name, state)
				return err
			},
		}
	}
	cmd.AddCommand(list, toggle("enable", "Let a plugin act", true), toggle("disable", "Stop a plugin", false))
	return cmd
}

// parts names what a plugin brings.
func parts(p plugins.Plugin) []string {
	var out []string
	if len(p.SkillDirs) > 0 {
		out = append(out, "skills")
	}
	if len(p.CommandDirs)+len(p.CommandFiles) > 0 {
		out = append(out, "commands")
	}
	if len(p.Hooks) > 0 {
		out = append(out, "hooks")
	}
	if len(p.MCPServers) > 0 {
		out = append(out, "MCP servers")
	}
	if len(out) == 0 {
		out = append(out, "nothing (the manifest names no parts)")
	}
	return out
}

func listPlugins(w io.Writer, asJSON bool) error {
	home, err := config.Home()
	if err != nil {
		return usageErr(err)
	}
	list, warnings := plugins.List(home)
	if asJSON {
		if list == nil {
			list = []plugins.Plugin{}
		}
		return writeJSON(w, list)
	}
	for _, warn := range warnings {
		fmt.Fprintf(w, "warning: %s\n", termsafe.Sanitize(warn))
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(w, "No plugins in %s/%s.\n", home, plugins.Dir)
		return err
	}
	for _, p := range list {
		state := "disabled"
		if p.Enabled {
			state = "enabled"
		}
		fmt.Fprintf(w, "%s  %s  %s  %s\n", p.Name, p.Version, state, oneLine(termsafe.Sanitize(p.Description), 60))
		fmt.Fprintf(w, "    %s: %s\n", p.Dir, strings.Join(parts(p), ", "))
		for _, name := range slices.Sorted(maps.Keys(p.MCPServers)) {
			fmt.Fprintf(w, "    MCP server %s (its tools are mcp__%s__…)\n", name, name)
		}
		for _, n := range p.Notices {
			fmt.Fprintf(w, "    note: %s\n", termsafe.Sanitize(n))
		}
	}
	return nil
}

// frozenContext returns what a session's prompt was frozen with, from its
// first events.
func frozenContext(ctx context.Context, st store.Store, id string) *protocol.FrozenContext {
	evs, err := st.Events(ctx, id, 0, 32)
	if err != nil {
		return nil
	}
	for _, e := range evs {
		if e.Type == protocol.EventContextFrozen {
			return e.Context
		}
	}
	return nil
}

// printFrozen prints the memory files and skills a session was frozen
// with.
func printFrozen(w io.Writer, fc *protocol.FrozenContext) {
	if fc == nil {
		return
	}
	if len(fc.Memory) > 0 {
		var names []string
		for _, m := range fc.Memory {
			n := fmt.Sprintf("%s (%d bytes, sha256 %.12s", m.Label, m.Bytes, m.SHA256)
			if m.Cut {
				n += ", cut"
			}
			names = append(names, n+")")
		}
		fmt.Fprintf(w, "Memory    %s\n", strings.Join(names, ", "))
	}
	if len(fc.Skills) > 0 {
		var listed, more []string
		for _, s := range fc.Skills {
			if s.Listed {
				listed = append(listed, s.Name)
			} else {
				more = append(more, s.Name)
			}
		}
		fmt.Fprintf(w, "Skills    %s", strings.Join(listed, ", "))
		if len(more) > 0 {
			fmt.Fprintf(w, " (and %d searchable: %s)", len(more), oneLine(strings.Join(more, ", "), 200))
		}
		fmt.Fprintln(w)
	}
}

// customCommand turns a prompt "/name args" naming a custom slash command
// into the command's prompt, with the model and the allow rules of its
// turn. A prompt that names no custom command is sent as it is (a path
// like /tmp, or a typo, which the model then sees); the second case is
// told on stderr. explicitModel is --model: it wins over the command's.
// sessionID is the session continued, if any: its mode and grants apply
// to the command's !`command` lines.
func customCommand(ctx context.Context, a *app.App, ws, sessionID, prompt, explicitModel string, errw io.Writer) (input, model string, grants []permission.Grant, err error) {
	name, args, ok := slashcmd.Split(prompt)
	if !ok {
		return prompt, "", nil, nil
	}
	cmds, warnings := a.Commands(ctx, ws)
	for _, w := range warnings {
		fmt.Fprintf(errw, "warning: %s\n", termsafe.Sanitize(w))
	}
	cmd, err := slashcmd.Find(cmds, name)
	if err != nil {
		fmt.Fprintf(errw, "No custom command /%s; sending the prompt as it is.\n", termsafe.Sanitize(name))
		return prompt, "", nil, nil
	}
	input, err = a.CommandPrompt(ctx, ws, sessionID, cmd, args)
	if err != nil {
		return "", "", nil, usageErr(err)
	}
	if cmd.Model != "" && explicitModel == "" {
		if m, err := a.ResolveModel(cmd.Model); err == nil {
			model = m.ID
		} else {
			fmt.Fprintf(errw, "Command /%s names the model %s, which is not configured (%v); using the session's.\n",
				cmd.Name, termsafe.Sanitize(cmd.Model), err)
		}
	}
	for _, t := range cmd.AllowedTools {
		grants = append(grants, permission.Grant{Rule: t, Origin: "command /" + cmd.Name + " (allowed-tools)"})
	}
	return input, model, grants, nil
}

// The REPL's backend offers memory, skills, the context report and custom
// commands.
var _ tui.ExtrasBackend = (*app.Backend)(nil)
