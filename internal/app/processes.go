package app

import (
	"context"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Processes lists the background processes of this process's sessions
// (the REPL's /ps).
func (b *Backend) Processes() []protocol.Process {
	list := b.a.Jobs.List()
	out := make([]protocol.Process, len(list))
	for i, j := range list {
		out[i] = protocol.Process{ID: j.ID, SessionID: j.SessionID, Command: j.Command, PID: j.PID,
			StartedAt: j.Started, Running: j.Running, ExitCode: j.ExitCode}
	}
	return out
}

// StopProcess stops a background process of the session (/ps kill ID).
func (b *Backend) StopProcess(ctx context.Context, sessionID, id string) error {
	_, err := b.a.Jobs.Stop(sessionID, id)
	return err
}
