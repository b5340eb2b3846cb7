package protocol

// ResolveApproval answers a pending approval: the command every front end
// (the TUI, the REPL, the web panel through the HTTP API) sends the core.
// Turns are started and cancelled through the front ends' Backend, not by
// a command type of the wire format: the HTTP API's are SendMessage and
// the cancel route.
type ResolveApproval struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Approve   bool   `json:"approve"`
	// Scope is how far an approval reaches; "" is ScopeOnce.
	Scope    ApprovalScope `json:"scope,omitempty"`
	Feedback string        `json:"feedback,omitempty"`
}
