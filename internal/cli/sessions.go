package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

func newSessionsCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List and inspect stored sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("say what to do: `mx-claw sessions list` or `mx-claw sessions show ID`")
		},
	}
	var listJSON, all bool
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recent first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st store.Store) error {
				opts := store.ListOptions{Limit: limit}
				if !all {
					ws, err := workspaceDir("")
					if err != nil {
						return err
					}
					opts.Workspace = ws
				}
				list, err := st.ListSessions(cmd.Context(), opts)
				if err != nil {
					return err
				}
				if listJSON {
					if list == nil {
						list = []protocol.Session{}
					}
					return writeJSON(stdio.Out, list)
				}
				return printSessions(stdio.Out, list)
			})
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")
	list.Flags().BoolVar(&all, "all", false, "list the sessions of every workspace, not only the current one")
	list.Flags().IntVar(&limit, "limit", 50, "show at most this many sessions (0: all)")

	var showJSON bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its record, transcript and pending approvals",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st store.Store) error {
				return showSession(cmd.Context(), st, stdio.Out, args[0], showJSON)
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")

	var instructions string
	compactCmd := &cobra.Command{
		Use:   "compact ID",
		Short: "Summarise a session's older messages for the model now",
		Long: `Summarises the older part of a session so the model sees a summary (and the
pinned ledger of the user's instructions, files and commands) instead of them.
The stored transcript keeps every message.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compactSession(cmd.Context(), stdio, args[0], instructions)
		},
	}
	compactCmd.Flags().StringVar(&instructions, "instructions", "", "what the summary should focus on")
	cmd.AddCommand(list, show, compactCmd)
	cmd.AddCommand(librarySubcommands(stdio)...)
	return cmd
}

// withStore opens the home's store for f.
func withStore(ctx context.Context, f func(store.Store) error) error {
	home, err := config.Home()
	if err != nil {
		return usageErr(err)
	}
	st, err := app.OpenStore(ctx, home)
	if err != nil {
		return err
	}
	defer st.Close()
	// A session a dead process left running is shown as what it is.
	_, _ = agent.RecoverInterrupted(ctx, st, store.NewOwner())
	return f(st)
}

func printSessions(w io.Writer, list []protocol.Session) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No sessions yet.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tMODEL\tTITLE")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Status, s.UpdatedAt.Local().Format(time.DateTime), s.Model, oneLine(s.Title, 50))
	}
	return tw.Flush()
}

// sessionDump is the JSON form of `sessions show`.
type sessionDump struct {
	Session   *protocol.Session   `json:"session"`
	Messages  []protocol.Message  `json:"messages"`
	Approvals []protocol.Approval `json:"pendingApprovals"`
	// Subagents are the sessions its task calls started, with theirs.
	Subagents []sessionTree `json:"subagents,omitempty"`
	// Changes are the files tool calls changed (issue 16), Rewinds the
	// conversation rewinds.
	Changes []protocol.ChangeRecord `json:"changes"`
	Rewinds []protocol.Rewind       `json:"rewinds"`
	// Context is what the session's prompt was frozen with: its memory
	// files and skills.
	Context *protocol.FrozenContext `json:"context,omitempty"`
}

func showSession(ctx context.Context, st store.Store, w io.Writer, id string, asJSON bool) error {
	s, err := st.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usagef("session %s does not exist; `mx-claw sessions list --all` shows the sessions", id)
	}
	if err != nil {
		return err
	}
	msgs, err := st.Messages(ctx, id, 0)
	if err != nil {
		return err
	}
	pending, err := st.PendingApprovals(ctx, id)
	if err != nil {
		return err
	}
	changes, rewinds, err := history(ctx, st, id)
	if err != nil {
		return err
	}
	if asJSON {
		if msgs == nil {
			msgs = []protocol.Message{}
		}
		if pending == nil {
			pending = []protocol.Approval{}
		}
		tree, err := childrenOf(ctx, st, id, 0)
		if err != nil {
			return err
		}
		return writeJSON(w, sessionDump{Session: s, Messages: msgs, Approvals: pending, Changes: changes, Rewinds: rewinds,
			Context: frozenContext(ctx, st, id), Subagents: tree})
	}
	fmt.Fprintf(w, "Session   %s\nTitle     %s\nWorkspace %s\nModel     %s\nStatus    %s\n", s.ID, s.Title, s.Workspace, s.Model, s.Status)
	if s.LastError != "" {
		fmt.Fprintf(w, "Error     %s\n", s.LastError)
	}
	fmt.Fprintf(w, "Updated   %s\nTokens    %d in (%d cached), %d out\n", s.UpdatedAt.Local().Format(time.DateTime),
		s.Usage.InputTokens, s.Usage.CachedTokens, s.Usage.OutputTokens)
	printFrozen(w, frozenContext(ctx, st, id))
	if err := showTree(ctx, st, w, s); err != nil {
		return err
	}
	if t, err := telemetry(ctx, st, id); err == nil {
		fmt.Fprintf(w, "Turns     %d (model %s, tools %s)\n", t.turns, t.model.Round(time.Millisecond), t.tools.Round(time.Millisecond))
		if t.costKnown {
			fmt.Fprintf(w, "Cost      $%.4f (estimated)\n", t.cost)
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case protocol.RoleSystem:
			continue
		case protocol.RoleTool:
			status := "ok"
			if m.IsError {
				status = "error"
			}
			fmt.Fprintf(w, "\n[tool %s %s] %s\n", m.ToolName, status, oneLine(m.Content, 200))
			if line := changesLine(changesOf(changes, m.Seq)); line != "" {
				fmt.Fprintf(w, "  %s\n", line)
			}
		default:
			who := string(m.Role)
			if m.Model != "" {
				who += " " + m.Model
			}
			if m.Role == protocol.RoleUser {
				who += fmt.Sprintf(" #%d", m.Seq)
			}
			if rewound(rewinds, m.Seq) {
				who += ", taken back by a rewind"
			}
			fmt.Fprintf(w, "\n[%s]\n%s\n", who, termsafe.Sanitize(strings.TrimRight(m.Content, "\n")))
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "  → %s %s\n", c.Name, oneLine(c.Arguments, 200))
			}
		}
	}
	if todos, err := lastTodos(ctx, st, id); err == nil && len(todos) > 0 {
		fmt.Fprintln(w, "\nTasks")
		for _, t := range todos {
			mark := "[ ]"
			switch t.Status {
			case protocol.TodoInProgress:
				mark = "[~]"
			case protocol.TodoCompleted:
				mark = "[x]"
			}
			fmt.Fprintf(w, "  %s %s\n", mark, termsafe.Sanitize(t.Content))
		}
	}
	for _, a := range pending {
		fmt.Fprintf(w, "\nPending approval %s: %s\n", a.ID, termsafe.Sanitize(a.Summary))
	}
	return nil
}

// lastTodos returns the session's latest task list (from its last
// todo.updated event).
func lastTodos(ctx context.Context, st store.Store, id string) ([]protocol.Todo, error) {
	evs, err := st.Events(ctx, id, 0, 0)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == protocol.EventTodoUpdated {
			return evs[i].Todos, nil
		}
	}
	return nil, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func compactSession(ctx context.Context, stdio IO, id, instructions string) error {
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	var done *protocol.Compaction
	err = a.Core.Compact(ctx, id, instructions, func(e protocol.Event) {
		if e.Type == protocol.EventCompaction {
			done = e.Compaction
		}
	})
	switch {
	case errors.Is(err, agent.ErrNothingToCompact):
		_, err = fmt.Fprintln(stdio.Out, "Nothing to compact yet.")
		return err
	case err != nil:
		return err
	}
	if done != nil {
		fmt.Fprintf(stdio.Out, "Compacted messages up to %d.\n\n%s\n", done.UpToSeq, termsafe.Sanitize(done.Summary))
	}
	return nil
}

// sessionTelemetry sums a session's per-turn telemetry from its events.
type sessionTelemetry struct {
	turns        int
	model, tools time.Duration
	cost         float64
	costKnown    bool
}

func telemetry(ctx context.Context, st store.Store, id string) (sessionTelemetry, error) {
	var t sessionTelemetry
	evs, err := st.Events(ctx, id, 0, 0)
	if err != nil {
		return t, err
	}
	for _, e := range evs {
		switch e.Type {
		case protocol.EventTurnCompleted:
			t.turns++
			t.model += time.Duration(e.ModelMS) * time.Millisecond
			t.tools += time.Duration(e.ToolMS) * time.Millisecond
		case protocol.EventUsage:
			if e.CostUSD != nil {
				t.cost += *e.CostUSD
				t.costKnown = true
			}
		}
	}
	return t, nil
}
