package protocol

// SubmitTurn asks the core to run one turn of a session with a user message.
type SubmitTurn struct {
	SessionID string `json:"sessionId"`
	Input     string `json:"input"`
	// Model overrides the session's model for this turn and later ones
	// ("provider/model").
	Model string `json:"model,omitempty"`
	// MaxIterations caps the model steps of the turn; 0 means the default.
	MaxIterations int `json:"maxIterations,omitempty"`
}

// CancelTurn asks the core to stop the turn running on a session.
type CancelTurn struct {
	SessionID string `json:"sessionId"`
}

// ResolveApproval answers a pending approval.
type ResolveApproval struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Approve   bool   `json:"approve"`
	// Scope is "once", "session" or "always".
	Scope    string `json:"scope,omitempty"`
	Feedback string `json:"feedback,omitempty"`
}
