package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// notCovered says what checkpoints do not cover, after every restore.
const notCovered = "Not covered: files git ignores (unless a file tool changed them by name) and files over 16 MiB."

func newUndoCmd(stdio IO) *cobra.Command {
	var session, conflicts string
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Put back the files the last turn changed (by tools and by commands)",
		Long: `Puts the files the session's last turn changed — with edit tools and with
commands alike — back as they were before it. A file changed since by you or
another program is not overwritten: it is listed as a conflict and the rest
are restored. Run again with --conflicts merge to take the agent's change out
of such files by a three-way merge, or --conflicts keep to keep them as they
are. Each undo goes one turn further back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			policy, err := checkpoint.ParsePolicy(conflicts)
			if err != nil {
				return usageErr(err)
			}
			return withApp(cmd.Context(), func(a *app.App) error {
				id, err := sessionOrLatest(cmd.Context(), a.Store, session)
				if err != nil {
					return err
				}
				res, err := a.Core.Undo(cmd.Context(), id, policy, nil)
				if errors.Is(err, agent.ErrNothingToUndo) {
					_, err = fmt.Fprintf(stdio.Out, "Nothing to undo in session %s.\n", id)
					return err
				}
				if err != nil {
					return err
				}
				return printRestore(stdio.Out, "Undid the file changes of the last turn of session "+id+".", res, "mx-claw undo --session "+id)
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session (default: the workspace's latest)")
	cmd.Flags().StringVar(&conflicts, "conflicts", "", "what to do with files changed since the agent's change: merge or keep")
	return cmd
}

func newRewindCmd(stdio IO) *cobra.Command {
	var session, conflicts string
	var to int64
	var filesOnly, conversationOnly bool
	cmd := &cobra.Command{
		Use:   "rewind",
		Short: "Take a session back to before one of its messages: files and/or conversation",
		Long: `Without --to, lists the session's messages with the files changed after each.
With --to N (a message number from that list), puts the files back as they
were before message N and makes the model's view of the conversation end
before it; the stored transcript keeps every message. --files-only or
--conversation-only does one of the two. Files changed since the agent's
change are handled as undo handles them (--conflicts merge|keep).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if filesOnly && conversationOnly {
				return usagef("--files-only and --conversation-only cannot be used together")
			}
			policy, err := checkpoint.ParsePolicy(conflicts)
			if err != nil {
				return usageErr(err)
			}
			return withApp(cmd.Context(), func(a *app.App) error {
				id, err := sessionOrLatest(cmd.Context(), a.Store, session)
				if err != nil {
					return err
				}
				if to == 0 {
					tl, err := a.Core.Timeline(cmd.Context(), id)
					if err != nil {
						return err
					}
					return printTimeline(stdio.Out, id, tl)
				}
				opts := agent.RewindOptions{Files: !conversationOnly, Conversation: !filesOnly, Policy: policy}
				res, err := a.Core.Rewind(cmd.Context(), id, to, opts, nil)
				var nu *agent.NotUserMessageError
				if errors.As(err, &nu) {
					return usageErr(err)
				}
				if err != nil {
					return err
				}
				head := fmt.Sprintf("Rewound session %s to before message %d", id, to)
				switch {
				case filesOnly:
					head += " (files only; the conversation is kept)."
				case conversationOnly:
					head += " (conversation only; the files are as they are now)."
				default:
					head += ": files and conversation."
				}
				return printRestore(stdio.Out, head, res, fmt.Sprintf("mx-claw rewind --session %s --to %d --files-only", id, to))
			})
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session (default: the workspace's latest)")
	cmd.Flags().Int64Var(&to, "to", 0, "the message to go back to (before it)")
	cmd.Flags().BoolVar(&filesOnly, "files-only", false, "put back the files only")
	cmd.Flags().BoolVar(&conversationOnly, "conversation-only", false, "take back the conversation only")
	cmd.Flags().StringVar(&conflicts, "conflicts", "", "what to do with files changed since the agent's change: merge or keep")
	return cmd
}

// withApp opens the app for f and closes it after.
func withApp(ctx context.Context, f func(*app.App) error) error {
	a, err := openApp(ctx, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	return f(a)
}

// sessionOrLatest returns id, checked, or the current workspace's latest
// session.
func sessionOrLatest(ctx context.Context, st store.Store, id string) (string, error) {
	if id != "" {
		if _, err := st.GetSession(ctx, id); errors.Is(err, store.ErrNotFound) {
			return "", usagef("session %s does not exist; `mx-claw sessions list --all` shows the sessions", id)
		} else if err != nil {
			return "", err
		}
		return id, nil
	}
	ws, err := workspaceDir("")
	if err != nil {
		return "", err
	}
	list, err := st.ListSessions(ctx, store.ListOptions{Workspace: ws, Limit: 1})
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", usagef("no session in %s; name one with --session ID", ws)
	}
	return list[0].ID, nil
}

// printRestore reports an undo or rewind; conflicts and failures make it
// exit 1 after saying so.
func printRestore(w io.Writer, head string, r *protocol.Restore, again string) error {
	fmt.Fprintln(w, head)
	section := func(title string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintln(w, title)
		for _, p := range paths {
			fmt.Fprintf(w, "  %s\n", termsafe.Sanitize(p))
		}
	}
	section("Restored:", r.Restored)
	section("Merged (the agent's change taken out, yours kept):", r.Merged)
	section("Merged with conflicts (markers left in the file):", r.MergeConflicts)
	section("Kept as you changed them:", r.Kept)
	section("Changed since the agent's change, left as they are:", r.Conflicts)
	section("Not restored:", r.Failed)
	if len(r.Restored)+len(r.Merged)+len(r.Kept)+len(r.Conflicts)+len(r.Failed) == 0 {
		fmt.Fprintln(w, "No file needed restoring.")
	}
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(w, "Run `%s --conflicts merge` to take the agent's change out of them by a three-way merge, or `--conflicts keep` to keep them as they are.\n", again)
	}
	fmt.Fprintln(w, notCovered)
	if len(r.Conflicts)+len(r.Failed) > 0 {
		return &exitError{code: ExitFailed, err: errors.New("some files were not restored"), quiet: true}
	}
	return nil
}

// printTimeline lists a session's user messages with the files changed
// after each.
func printTimeline(w io.Writer, id string, tl []agent.TimelineEntry) error {
	if len(tl) == 0 {
		_, err := fmt.Fprintf(w, "Session %s has no messages yet.\n", id)
		return err
	}
	fmt.Fprintf(w, "Messages of session %s (rewind with --to N):\n", id)
	for _, e := range tl {
		fmt.Fprintf(w, "  %4d  %s\n", e.Seq, oneLine(termsafe.Sanitize(e.Text), 70))
		if line := changesLine(e.Changes); line != "" {
			fmt.Fprintf(w, "        %s\n", line)
		}
	}
	return nil
}

// changesLine summarises change records: "changed 3 files: modified a.go,
// deleted b.go (undone)".
func changesLine(recs []protocol.ChangeRecord) string {
	if len(recs) == 0 {
		return ""
	}
	changes := make([]protocol.FileChange, len(recs))
	undone := 0
	for i, r := range recs {
		changes[i] = r.FileChange
		if r.Reverted {
			undone++
		}
	}
	desc := checkpoint.Describe(changes)
	line := checkpoint.Summary(changes)
	if line == "" {
		line = "changed directories"
	}
	line += ": " + strings.Join(desc, ", ")
	if undone == len(recs) {
		line += " (put back since)"
	}
	return termsafe.Sanitize(oneLine(line, 160))
}

// history returns a session's file changes and rewinds.
func history(ctx context.Context, st store.Store, id string) ([]protocol.ChangeRecord, []protocol.Rewind, error) {
	changes, err := st.Changes(ctx, id, 0)
	if err != nil {
		return nil, nil, err
	}
	rewinds, err := st.Rewinds(ctx, id)
	return changes, rewinds, err
}

// changesOf returns the change records stored with the message seq.
func changesOf(all []protocol.ChangeRecord, seq int64) []protocol.ChangeRecord {
	var out []protocol.ChangeRecord
	for _, c := range all {
		if c.MessageSeq == seq {
			out = append(out, c)
		}
	}
	return out
}

// rewound reports whether a rewind took message seq back.
func rewound(rewinds []protocol.Rewind, seq int64) bool {
	for _, r := range rewinds {
		if seq >= r.ToSeq && seq <= r.FromSeq {
			return true
		}
	}
	return false
}
