package protocol

import "time"

// Process is a background process a session's command started
// (run_command with background: true), as /ps lists it.
type Process struct {
	ID        string    `json:"id"`
	SessionID string    `json:"sessionId"`
	Command   string    `json:"command"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	Running   bool      `json:"running"`
	// ExitCode is the exit status of a process that ended.
	ExitCode int `json:"exitCode,omitempty"`
}
