package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sessionio"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// librarySubcommands are the `sessions` subcommands of issue 16: search,
// export, rm, prune and fork.
func librarySubcommands(stdio IO) []*cobra.Command {
	return []*cobra.Command{newSearchCmd(stdio), newExportCmd(stdio), newRmCmd(stdio), newPruneCmd(stdio), newForkCmd(stdio)}
}

func newSearchCmd(stdio IO) *cobra.Command {
	var workspace string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY…",
		Short: "Search every session's messages, best matches first",
		Long: `Searches the text of every session's messages (yours, the model's answers
and tool calls, and tool results). All words must match, in any form that
stems alike (test, tests, testing); "a phrase" in quotes matches in order;
word* matches a prefix.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := store.SearchQuery{Text: strings.Join(args, " "), Limit: limit}
			if workspace != "" {
				ws, err := workspaceDir(workspace)
				if err != nil {
					return err
				}
				q.Workspace = ws
			}
			return withStore(cmd.Context(), func(st store.Store) error {
				hits, err := st.Search(cmd.Context(), q)
				if errors.Is(err, store.ErrEmptyQuery) {
					return usageErr(err)
				}
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(stdio.Out, hits)
				}
				return printHits(stdio.Out, hits)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "search only the sessions of this workspace (\".\" for the current one)")
	cmd.Flags().IntVar(&limit, "limit", 20, "show at most this many matches")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printHits(w io.Writer, hits []protocol.SearchHit) error {
	if len(hits) == 0 {
		_, err := fmt.Fprintln(w, "No matches.")
		return err
	}
	for _, h := range hits {
		title := h.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(w, "%s  #%d %s  %s  %s\n", h.SessionID, h.Seq, h.Role, h.UpdatedAt.Local().Format("2006-01-02 15:04"),
			oneLine(termsafe.Sanitize(title), 60))
		fmt.Fprintf(w, "    %s\n", oneLine(termsafe.Sanitize(h.Snippet), 160))
	}
	return nil
}

func newExportCmd(stdio IO) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Write a session as JSONL or Markdown, secrets left out",
		Long: `Writes a session to standard output (or --output FILE): --format jsonl (the
default) gives the session, every message and event, one JSON object a line,
which mx-claw import mx-claw FILE reads back; --format markdown gives a
transcript to read. Configured API keys and anything shaped like a
credential are replaced by [redacted].`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "jsonl" && format != "markdown" && format != "md" {
				return usagef("unknown --format %q: use jsonl or markdown", format)
			}
			return withApp(cmd.Context(), func(a *app.App) error {
				if _, err := sessionOrLatest(cmd.Context(), a.Store, args[0]); err != nil {
					return err
				}
				w := stdio.Out
				if output != "" {
					f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
					if err != nil {
						return usageErr(err)
					}
					defer f.Close()
					w = f
				}
				return a.ExportSession(cmd.Context(), args[0], format, w)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl or markdown")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (mode 0600) instead of standard output")
	return cmd
}

func newRmCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID…",
		Short: "Delete sessions, with their events, approvals and file versions",
		Long: `Deletes sessions and everything stored with them: transcript, events,
approvals, queued messages, file versions and checkpoints no other session
needs. A session a turn is running on is refused.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd.Context(), func(a *app.App) error {
				deleted, err := a.DeleteSessions(cmd.Context(), args)
				for _, id := range deleted {
					fmt.Fprintf(stdio.Out, "Deleted %s.\n", id)
				}
				if err != nil {
					fmt.Fprintln(stdio.Err, err)
					return &exitError{code: ExitFailed, err: err, quiet: true}
				}
				return nil
			})
		},
	}
}

func newPruneCmd(stdio IO) *cobra.Command {
	var olderThan string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune --older-than AGE",
		Short: "Delete the sessions not used for a while",
		Long: `Deletes, in every workspace, the sessions last updated longer ago than AGE
(30d, 12h, 2w, 90m), as sessions rm does; sessions in use are kept.
--dry-run lists them without deleting.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			age, err := parseAge(olderThan)
			if err != nil {
				return usageErr(err)
			}
			return withApp(cmd.Context(), func(a *app.App) error {
				list, err := a.Store.ListSessions(cmd.Context(), store.ListOptions{})
				if err != nil {
					return err
				}
				cutoff := time.Now().Add(-age)
				var ids []string
				for _, s := range list {
					if s.UpdatedAt.Before(cutoff) {
						ids = append(ids, s.ID)
						if dryRun {
							fmt.Fprintf(stdio.Out, "Would delete %s  %s  %s\n", s.ID, s.UpdatedAt.Local().Format(time.DateTime), oneLine(termsafe.Sanitize(s.Title), 50))
						}
					}
				}
				if len(ids) == 0 {
					_, err := fmt.Fprintf(stdio.Out, "No session older than %s.\n", olderThan)
					return err
				}
				if dryRun {
					return nil
				}
				deleted, err := a.DeleteSessions(cmd.Context(), ids)
				fmt.Fprintf(stdio.Out, "Deleted %d sessions not updated in %s.\n", len(deleted), olderThan)
				if err != nil {
					fmt.Fprintln(stdio.Err, err)
					return &exitError{code: ExitFailed, err: err, quiet: true}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "age: 30d, 12h, 2w, 90m")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted")
	cmd.MarkFlagRequired("older-than")
	return cmd
}

// parseAge reads an age: a Go duration, or N with d (days) or w (weeks).
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("--older-than needs an age: 30d, 12h, 2w")
	}
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("age %q: want a positive number before %s", s, suffix)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("age %q: use 30d, 12h, 2w or 90m", s)
	}
	return d, nil
}

func newForkCmd(stdio IO) *cobra.Command {
	var at int64
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Start a new session with a session's conversation, whole or up to a message",
		Long: `Starts a new session in the same workspace whose transcript is the
session's, up to (not including) its message --at N (mx-claw rewind
--session ID lists them), or all of it. The files are not touched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withApp(cmd.Context(), func(a *app.App) error {
				if _, err := sessionOrLatest(cmd.Context(), a.Store, args[0]); err != nil {
					return err
				}
				s, err := a.Core.Fork(cmd.Context(), args[0], at, nil)
				var nu *agent.NotUserMessageError
				if errors.As(err, &nu) {
					return usageErr(err)
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(stdio.Out, "Forked %s into %s (%d messages). Continue it with: mx-claw --resume %s\n",
					args[0], s.ID, s.MessageCount, s.ID)
				return err
			})
		},
	}
	cmd.Flags().Int64Var(&at, "at", 0, "the message to fork before (default: fork all of it)")
	return cmd
}

func newImportCmd(stdio IO) *cobra.Command {
	var workspace string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import SOURCE [PATH]",
		Short: "Import sessions from another agent: claude, codex, opencode, gemini (or an mx-claw export)",
		Long: `Reads the sessions another agent keeps and stores each as an mx-claw session
that mx-claw --resume ID continues with any model. SOURCE is claude (Claude
Code, ~/.claude/projects), codex (~/.codex/sessions), opencode
(~/.local/share/opencode), gemini (~/.gemini/tmp) or mx-claw (a file written
by mx-claw sessions export). PATH is a file or directory instead of the
default. Records that are not messages are kept as notes; importing again
skips sessions imported before. A session whose workspace is not a
directory here gets --workspace (default: the current directory).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			source := strings.ToLower(args[0])
			path := ""
			if len(args) == 2 {
				path = args[1]
			} else {
				home, _ := os.UserHomeDir()
				p, err := sessionio.DefaultPath(source, sessionio.Env{Home: home, Getenv: os.Getenv})
				if err != nil {
					return usageErr(err)
				}
				path = p
			}
			ws, err := workspaceDir(workspace)
			if err != nil {
				return err
			}
			return withApp(cmd.Context(), func(a *app.App) error {
				out, failures, err := a.Import(cmd.Context(), source, path, ws)
				if errors.Is(err, sessionio.ErrUnknownSource) {
					return usageErr(err)
				}
				if err != nil {
					return err
				}
				if asJSON {
					if out == nil {
						out = []app.ImportOutcome{}
					}
					return writeJSON(stdio.Out, out)
				}
				return printImport(stdio, path, out, failures)
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace for sessions whose own is unknown here (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printImport(stdio IO, path string, out []app.ImportOutcome, failures []sessionio.Failure) error {
	imported := 0
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	for _, o := range out {
		switch o.Skipped {
		case "":
			imported++
			fmt.Fprintf(tw, "imported\t%s\t%d messages, %d notes\t%s\n", o.SessionID, o.Messages, o.Notes, oneLine(termsafe.Sanitize(o.Title), 50))
			if o.WorkspaceNote != "" {
				fmt.Fprintf(tw, "\t\tworkspace %s: %s\t\n", o.Workspace, o.WorkspaceNote)
			}
		default:
			fmt.Fprintf(tw, "skipped\t%s\t%s\t%s\n", cmp.Or(o.SessionID, o.SourceID), o.Skipped, oneLine(termsafe.Sanitize(o.Title), 50))
		}
	}
	tw.Flush()
	for _, f := range failures {
		fmt.Fprintf(stdio.Err, "could not read %s: %v\n", f.Path, f.Err)
	}
	fmt.Fprintf(stdio.Out, "Imported %d of %d sessions from %s. Continue one with: mx-claw --resume ID\n", imported, len(out), path)
	return nil
}
