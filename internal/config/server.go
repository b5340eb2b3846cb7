package config

// ServerSettings configure `mx-claw serve`.
type ServerSettings struct {
	// ResumeInterrupted, if false, stops a server from going on with a
	// turn whose process died while it ran (another worker on a shared
	// store, or an earlier server): the turn is only recorded as failed
	// and the messages queued behind it are sent. Absent means on.
	ResumeInterrupted *bool `json:"resumeInterrupted,omitempty"`
}

// ResumeInterrupted reports whether a server resumes interrupted turns
// (server.resumeInterrupted; default true).
func (c *Config) ResumeInterrupted() bool {
	return c.Server.ResumeInterrupted == nil || *c.Server.ResumeInterrupted
}
