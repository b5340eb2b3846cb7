package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// psBackend adds background processes to the fake backend.
type psBackend struct {
	*fakeBackend
	procs   []protocol.Process
	stopped []string
}

func (p *psBackend) Processes() []protocol.Process { return p.procs }
func (p *psBackend) StopProcess(_ context.Context, _, id string) error {
	p.stopped = append(p.stopped, id)
	return nil
}

func TestPsListsAndStopsProcesses(t *testing.T) {
	h := newHarness(t, 100, 24)
	h.typeLine("/ps")
	if s := h.screen(); !strings.Contains(s, "Background processes are not available here.") {
		t.Errorf("without process support:\n%s", s)
	}
	pb := &psBackend{fakeBackend: h.b, procs: []protocol.Process{
		{ID: "bg1", SessionID: h.m.sess.ID, Command: "python3 -m http.server 8000", PID: 4242, StartedAt: time.Now().Add(-time.Minute), Running: true},
		{ID: "bg2", SessionID: "other", Command: "npm run watch", PID: 4343, StartedAt: time.Now(), ExitCode: 1},
	}}
	h.m.backend = pb
	h.typeLine("/ps")
	h.patience = time.Second // stopping runs as a command: wait for it on a loaded machine
	h.typeLine("/ps kill bg1")
	s := h.screen()
	for _, want := range []string{"Background processes", "bg1   pid 4242", "python3 -m http.server 8000", "bg2   pid 4343", "ended (exit 1)", "(another session)", "Stopped bg1."} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if len(pb.stopped) != 1 || pb.stopped[0] != "bg1" {
		t.Errorf("stopped = %v", pb.stopped)
	}
}
