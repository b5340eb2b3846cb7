package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// processBackend is a Backend that runs background processes (/ps).
type processBackend interface {
	// Processes lists the background processes of this mx-claw.
	Processes() []protocol.Process
	// StopProcess stops one of the session's background processes.
	StopProcess(ctx context.Context, sessionID, id string) error
}

// psCommand runs /ps: list the background processes, or with "kill ID"
// stop one.
func (m *Model) psCommand(args []string) []tea.Cmd {
	pb, ok := m.backend.(processBackend)
	if !ok {
		m.print(m.th.dim.Render("Background processes are not available here."))
		return nil
	}
	if len(args) == 2 && (args[0] == "kill" || args[0] == "stop") {
		ctx, sid, id := m.ctx, m.sess.ID, args[1]
		return []tea.Cmd{func() tea.Msg {
			if err := pb.StopProcess(ctx, sid, id); err != nil {
				return noticeMsg{err: err}
			}
			return noticeMsg{text: "Stopped " + clean(id) + "."}
		}}
	}
	if len(args) > 0 {
		m.print(m.th.warn.Render("usage: /ps, or /ps kill ID"))
		return nil
	}
	m.print(m.processList(pb.Processes()))
	return nil
}

// processList renders the background processes.
func (m *Model) processList(ps []protocol.Process) string {
	if len(ps) == 0 {
		return m.th.dim.Render("No background processes.")
	}
	lines := []string{m.th.bold.Render("Background processes")}
	for _, p := range ps {
		state := "running " + time.Since(p.StartedAt).Round(time.Second).String()
		if !p.Running {
			state = fmt.Sprintf("ended (exit %d)", p.ExitCode)
		}
		mine := ""
		if p.SessionID != m.sess.ID {
			mine = m.th.dim.Render("  (another session)")
		}
		lines = append(lines, fmt.Sprintf("  %-5s pid %-7d %-18s %s%s", p.ID, p.PID, state,
			oneLine(clean(strings.TrimSpace(p.Command)), max(m.width-45, 20)), mine))
	}
	lines = append(lines, m.th.dim.Render("  /ps kill ID stops one; all stop when mx-claw exits."))
	return strings.Join(lines, "\n")
}
