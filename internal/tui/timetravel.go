package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TimeTravel is what /undo, /rewind and /sessions QUERY need of the
// backend (issue 16). A Backend that does not implement it has no such
// commands; the commands say so.
type TimeTravel interface {
	// Undo puts back the files the session's last turn changed;
	// conflicts is "", "merge" or "keep". A nil Restore and no error
	// mean there was nothing to undo.
	Undo(ctx context.Context, sessionID, conflicts string) (*protocol.Restore, error)
	// Timeline returns the session's user messages (as the model sees
	// them) and the file changes recorded in it.
	Timeline(ctx context.Context, sessionID string) ([]protocol.Message, []protocol.ChangeRecord, error)
	// Rewind takes the session back to before its user message toSeq:
	// the files, the conversation or both.
	Rewind(ctx context.Context, sessionID string, toSeq int64, files, conversation bool, conflicts string) (*protocol.Restore, error)
	// SearchSessions searches the messages of the workspace's sessions.
	SearchSessions(ctx context.Context, query string) ([]protocol.SearchHit, error)
}

// timeTravelCommands are the /help lines of these commands.
var timeTravelCommands = []slashCommand{
	{"/undo", "[merge|keep]", "put back the files the last turn changed"},
	{"/rewind", "", "go back to before a message: files and/or conversation"},
}

// timeTravel runs /undo and /rewind.
func (m *Model) timeTravel(name string, args []string) []tea.Cmd {
	tt, ok := m.backend.(TimeTravel)
	if !ok {
		m.print(m.th.warn.Render(name + " is not available here."))
		return nil
	}
	ctx, sid := m.ctx, m.sess.ID
	conflicts := ""
	if len(args) > 0 {
		conflicts = args[0]
	}
	if name == "/undo" {
		return []tea.Cmd{func() tea.Msg {
			r, err := tt.Undo(ctx, sid, conflicts)
			if err != nil {
				return noticeMsg{err: err}
			}
			if r == nil {
				return noticeMsg{text: m.th.dim.Render("Nothing to undo in this session.")}
			}
			return noticeMsg{text: m.restoreReport("Undid the file changes of the last turn.", r, "/undo")}
		}}
	}
	p := uiPrompter{events: m.events}
	return []tea.Cmd{func() tea.Msg {
		text, err := m.rewindMenu(ctx, tt, p, sid, conflicts)
		if errors.Is(err, modelcmd.ErrCancelled) {
			return noticeMsg{text: m.th.warn.Render("Cancelled.")}
		}
		return noticeMsg{text: text, err: err}
	}}
}

// rewindMenu asks which message to go back to and what to take back, and
// does it. It runs off the UI goroutine; the prompts go through p.
func (m *Model) rewindMenu(ctx context.Context, tt TimeTravel, p uiPrompter, sid, conflicts string) (string, error) {
	msgs, changes, err := tt.Timeline(ctx, sid)
	if err != nil {
		return "", err
	}
	if len(msgs) == 0 {
		return m.th.dim.Render("Nothing to rewind to yet."), nil
	}
	opts := make([]modelcmd.Option, 0, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		msg := msgs[i]
		next := int64(1 << 62)
		if i+1 < len(msgs) {
			next = msgs[i+1].Seq
		}
		var after []protocol.FileChange
		for _, c := range changes {
			if c.MessageSeq > msg.Seq && c.MessageSeq < next && !c.Reverted {
				after = append(after, c.FileChange)
			}
		}
		label := fmt.Sprintf("#%d  %s", msg.Seq, oneLine(clean(msg.Content), 50))
		if s := changedFiles(after); s != "" {
			label += "  · " + s
		}
		opts = append(opts, modelcmd.Option{Value: strconv.FormatInt(msg.Seq, 10), Label: label, Current: i == len(msgs)-1})
	}
	v, err := p.Select(ctx, "Go back to before which message?", opts)
	if err != nil {
		return "", err
	}
	seq, _ := strconv.ParseInt(v, 10, 64)
	what, err := p.Select(ctx, "What to take back?", []modelcmd.Option{
		{Value: "both", Label: "Files and conversation", Current: true},
		{Value: "conversation", Label: "Conversation only (keep the files as they are)"},
		{Value: "files", Label: "Files only (keep the conversation)"},
	})
	if err != nil {
		return "", err
	}
	files, conv := what != "conversation", what != "files"
	r, err := tt.Rewind(ctx, sid, seq, files, conv, conflicts)
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("Rewound to before message #%d.", seq)
	if conv {
		i := slices.IndexFunc(msgs, func(x protocol.Message) bool { return x.Seq == seq })
		head = fmt.Sprintf("── Conversation taken back to before message #%d; the model no longer sees what follows. ──", seq)
		if i >= 0 {
			head += "\nIt was: " + oneLine(clean(msgs[i].Content), 200)
		}
	}
	if !files {
		return head, nil
	}
	return m.restoreReport(head, r, "/rewind"), nil
}

// restoreReport renders what an undo or rewind did to the files.
func (m *Model) restoreReport(head string, r *protocol.Restore, again string) string {
	lines := []string{head}
	add := func(title string, paths []string, style func(...string) string) {
		if len(paths) == 0 {
			return
		}
		lines = append(lines, style(title))
		for _, p := range paths {
			lines = append(lines, "  "+clean(p))
		}
	}
	add("Restored:", r.Restored, m.th.dim.Render)
	add("Merged (the agent's change taken out, yours kept):", r.Merged, m.th.dim.Render)
	add("Merged with conflict markers:", r.MergeConflicts, m.th.warn.Render)
	add("Kept as you changed them:", r.Kept, m.th.dim.Render)
	add("Changed since the agent's change, left as they are:", r.Conflicts, m.th.warn.Render)
	add("Not restored:", r.Failed, m.th.fail.Render)
	if len(r.Restored)+len(r.Merged)+len(r.Kept)+len(r.Conflicts)+len(r.Failed) == 0 {
		lines = append(lines, m.th.dim.Render("No file needed restoring."))
	}
	if len(r.Conflicts) > 0 {
		lines = append(lines, m.th.warn.Render(fmt.Sprintf("%s merge takes the agent's change out of them by a three-way merge; %s keep keeps them as they are.", again, again)))
	}
	lines = append(lines, m.th.dim.Render("Files git ignores (unless a file tool changed them by name) and files over 16 MiB are not covered."))
	return strings.Join(lines, "\n")
}

// searchSessions runs /sessions QUERY: the matching messages of this
// workspace's sessions, one to pick and resume.
func (m *Model) searchSessions(query string) []tea.Cmd {
	tt, ok := m.backend.(TimeTravel)
	if !ok {
		m.print(m.th.warn.Render("Search is not available here."))
		return nil
	}
	ctx, b := m.ctx, m.backend
	p := uiPrompter{events: m.events}
	return []tea.Cmd{func() tea.Msg {
		hits, err := tt.SearchSessions(ctx, query)
		if err != nil {
			return noticeMsg{err: err}
		}
		if len(hits) == 0 {
			return noticeMsg{text: m.th.dim.Render("No message of this workspace's sessions matches " + strconv.Quote(clean(query)) + ".")}
		}
		opts := make([]modelcmd.Option, len(hits))
		for i, h := range hits {
			title := h.Title
			if title == "" {
				title = "(untitled)"
			}
			opts[i] = modelcmd.Option{Value: h.SessionID,
				Label: fmt.Sprintf("%s  %s — %s", h.UpdatedAt.Local().Format("01-02 15:04"), oneLine(clean(title), 30), oneLine(clean(h.Snippet), 60))}
		}
		id, err := p.Select(ctx, "Sessions matching "+strconv.Quote(clean(query))+" (Enter resumes):", opts)
		if errors.Is(err, modelcmd.ErrCancelled) {
			return noticeMsg{text: m.th.warn.Render("Cancelled.")}
		}
		if err != nil {
			return noticeMsg{err: err}
		}
		s, hist, err := b.ResumeSession(ctx, id)
		return sessionMsg{sess: s, history: hist, err: err}
	}}
}

// changedFiles says how many files changes touched and how: "2 files
// changed (1 created)". Directories are not counted.
func changedFiles(changes []protocol.FileChange) string {
	n, created, deleted := 0, 0, 0
	for _, c := range changes {
		if c.Before.IsDir() || c.After.IsDir() {
			continue
		}
		n++
		switch c.Kind() {
		case protocol.ChangeCreated:
			created++
		case protocol.ChangeDeleted:
			deleted++
		}
	}
	if n == 0 {
		return ""
	}
	s := "1 file changed"
	if n > 1 {
		s = fmt.Sprintf("%d files changed", n)
	}
	var parts []string
	if created > 0 {
		parts = append(parts, fmt.Sprintf("%d created", created))
	}
	if deleted > 0 {
		parts = append(parts, fmt.Sprintf("%d deleted", deleted))
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// changesNote is the line under a tool card that says what the call
// changed: "changed 3 files: a.go, b.go, c.go".
func (m *Model) changesNote(changes []protocol.FileChange) string {
	s := changedFiles(changes)
	if s == "" {
		return ""
	}
	var paths []string
	for _, c := range changes {
		if !c.Before.IsDir() && !c.After.IsDir() {
			paths = append(paths, clean(c.Path))
		}
	}
	return m.th.dim.Render("  ↳ " + s + ": " + oneLine(strings.Join(paths, ", "), max(m.width-30, 30)) + "  (/undo puts them back)")
}

// replayTimeTravel shows, in a resumed session's history, an undo or a
// rewind where it happened.
func (m *Model) replayTimeTravel(ev protocol.Event) {
	r := ev.Restore
	if r == nil {
		return
	}
	switch ev.Type {
	case protocol.EventConversationRewound:
		m.print(m.th.dim.Render(fmt.Sprintf("── Conversation taken back to before message #%d; the model did not see what is above from here on. ──", r.ToSeq)))
	case protocol.EventCheckpointRestored:
		var parts []string
		if len(r.Restored) > 0 {
			parts = append(parts, "put back "+strings.Join(r.Restored, ", "))
		}
		if len(r.Merged) > 0 {
			parts = append(parts, "merged "+strings.Join(r.Merged, ", "))
		}
		if len(r.Conflicts)+len(r.Kept) > 0 {
			parts = append(parts, "left as changed "+strings.Join(append(slices.Clone(r.Conflicts), r.Kept...), ", "))
		}
		if len(parts) > 0 {
			m.print(m.th.dim.Render("↶ Files " + oneLine(clean(strings.Join(parts, "; ")), max(m.width-10, 30))))
		}
	}
}
