package protocol

// The HTTP API of `mx-claw serve` (DESIGN §11, "The local server —
// contract"). Requests and answers are JSON; every error answer is an
// ErrorResponse.

// ErrorResponse is the body of every error answer of the local server:
// {"error": {"code": "...", "message": "..."}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody says what went wrong: Code is one of the Code* constants, for
// programs; Message is a sentence for people.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes of ErrorBody, with the HTTP status each comes with.
const (
	CodeBadRequest        = "bad_request"            // 400
	CodeUnauthorized      = "unauthorized"           // 401
	CodeForbidden         = "forbidden"              // 403
	CodeNotFound          = "not_found"              // 404
	CodeMethodNotAllowed  = "method_not_allowed"     // 405
	CodeSessionBusy       = "session_busy"           // 409
	CodeConflict          = "conflict"               // 409
	CodeTooLarge          = "too_large"              // 413
	CodeUnsupportedMedia  = "unsupported_media_type" // 415
	CodeInternal          = "internal"               // 500
	CodeShuttingDown      = "shutting_down"          // 503
	CodeProviderNotReady  = "model_not_ready"        // 400
	CodeApprovalNotFound  = "approval_not_found"     // 404
	CodeQueuedNotFound    = "queued_input_not_found" // 404
	CodeSessionNotFound   = "session_not_found"      // 404
	CodeInvalidSettings   = "invalid_settings"       // 400
	CodeWorkspaceNotFound = "workspace_not_found"    // 400
)

// Health is the answer of GET /api/health.
type Health struct {
	OK bool `json:"ok"`
}

// SessionList is the answer of GET /api/sessions.
type SessionList struct {
	Sessions []Session `json:"sessions"`
}

// CreateSession is the body of POST /api/sessions. Model is
// "provider/model"; empty means the configured default.
type CreateSession struct {
	Workspace string `json:"workspace"`
	Model     string `json:"model,omitempty"`
}

// SessionDetail is the answer of GET /api/sessions/{id}.
type SessionDetail struct {
	Session          Session    `json:"session"`
	Messages         []Message  `json:"messages"`
	PendingApprovals []Approval `json:"pendingApprovals"`
	// Queued are the messages accepted but not sent yet, read before
	// Messages: a message leaves the queue only in the transaction that
	// stores it, so an accepted message is in one of the two (or was
	// given back with input.returned). Absent when none is queued, so the
	// answer is then exactly the contract's (DESIGN §11); an addition to
	// it otherwise.
	Queued []QueuedInput `json:"queued,omitempty"`
}

// SendMessage is the body of POST /api/sessions/{id}/messages. Images,
// optional, are pictures sent with the text for a model that reads them:
// each its file's bytes in base64 (Data) and, optionally, its file name;
// the server checks and scales them down.
type SendMessage struct {
	Text   string  `json:"text"`
	Images []Image `json:"images,omitempty"`
}

// MessageAccepted is the answer (202) of POST /api/sessions/{id}/messages:
// the turn that started (TurnID), or Queued when the session was busy and
// the message waits (stored) for its turn to end.
type MessageAccepted struct {
	TurnID string `json:"turnId,omitempty"`
	Queued bool   `json:"queued,omitempty"`
}

// CancelResult is the answer of POST /api/sessions/{id}/cancel: Cancelled
// says whether a running turn was stopped.
type CancelResult struct {
	Cancelled bool `json:"cancelled"`
}

// ApprovalAnswer is the body of POST
// /api/sessions/{id}/approvals/{requestId}. Decision is "allow" or
// "deny"; Scope (of an allow) is "once" (default), "session" or
// "always"; Message is told to the model with a denial.
type ApprovalAnswer struct {
	Decision ApprovalDecision `json:"decision"`
	Scope    ApprovalScope    `json:"scope,omitempty"`
	Message  string           `json:"message,omitempty"`
}

// ApprovalAccepted is the answer (202) to an ApprovalAnswer: the turn goes
// on (TurnID) with the call run or rejected.
type ApprovalAccepted struct {
	RequestID string           `json:"requestId"`
	Decision  ApprovalDecision `json:"decision"`
	TurnID    string           `json:"turnId,omitempty"`
}

// SetModel is the body of PUT /api/sessions/{id}/model.
type SetModel struct {
	Model string `json:"model"`
}

// ModelChanged is the answer of PUT /api/sessions/{id}/model. When a turn
// of the session is running, the new model applies from its next turn
// (Pending).
type ModelChanged struct {
	Session Session `json:"session"`
	Pending bool    `json:"pending,omitempty"`
}

// ModelList is the answer of GET /api/models: every model of every
// provider, and the default one.
type ModelList struct {
	Default string      `json:"default,omitempty"`
	Models  []ModelInfo `json:"models"`
}

// ModelInfo describes one model. Problem says why a model that is not
// Ready cannot be used yet (no key, no base URL, ...).
type ModelInfo struct {
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	Ready         bool   `json:"ready"`
	Problem       string `json:"problem,omitempty"`
	Default       bool   `json:"default,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// Settings is the answer of GET and PUT /api/settings. It never holds a
// secret: a provider's key is described by KeyConfigured and KeySource.
type Settings struct {
	Permissions    PermissionSettings `json:"permissions"`
	Modes          []string           `json:"modes"`
	ActiveProvider string             `json:"activeProvider,omitempty"`
	DefaultModel   string             `json:"defaultModel,omitempty"`
	Providers      []ProviderStatus   `json:"providers"`
}

// PermissionSettings are the permission part of the user's settings file
// ($MX_CLAW_HOME/settings.json): the default mode and the rule lists.
type PermissionSettings struct {
	// DefaultMode is "default", "acceptEdits", "plan", "bypass", or ""
	// (unset: default).
	DefaultMode string   `json:"defaultMode"`
	Allow       []string `json:"allow"`
	Ask         []string `json:"ask"`
	Deny        []string `json:"deny"`
	// File is the settings file they are read from and written to.
	File string `json:"file,omitempty"`
}

// ProviderStatus describes a provider without its key.
type ProviderStatus struct {
	Name           string   `json:"name"`
	Kind           string   `json:"kind"`
	BaseURL        string   `json:"baseURL"`
	Model          string   `json:"model"`
	Models         []string `json:"models"`
	RequiresAPIKey bool     `json:"requiresApiKey"`
	Configured     bool     `json:"configured"`
	// KeyConfigured says whether a key is found in the secret chain;
	// KeySource names where (an environment variable, the OS store, the
	// file store), never the key.
	KeyConfigured bool   `json:"keyConfigured"`
	KeySource     string `json:"keySource,omitempty"`
	Ready         bool   `json:"ready"`
	Problem       string `json:"problem,omitempty"`
}

// SettingsUpdate is the body of PUT /api/settings. Absent fields are left
// as they are; nothing is written unless everything in it is valid.
type SettingsUpdate struct {
	// Permissions replaces the fields it sets (nil lists are left alone;
	// an empty list clears one).
	Permissions *PermissionsUpdate `json:"permissions,omitempty"`
	// APIKeys stores a provider's key in the secret chain; "" deletes it
	// from the writable stores. Keys are never returned.
	APIKeys map[string]string `json:"apiKeys,omitempty"`
	// DefaultModel ("provider/model") becomes the default model and its
	// provider the active one.
	DefaultModel string `json:"defaultModel,omitempty"`
}

// PermissionsUpdate changes the user's permission settings.
type PermissionsUpdate struct {
	DefaultMode *string   `json:"defaultMode,omitempty"`
	Allow       *[]string `json:"allow,omitempty"`
	Ask         *[]string `json:"ask,omitempty"`
	Deny        *[]string `json:"deny,omitempty"`
}

// QueuedList is the answer of GET /api/sessions/{id}/queued: the messages
// waiting for the session's turn to end, oldest first.
type QueuedList struct {
	Queued []QueuedInput `json:"queued"`
}

// Events of the SSE stream (GET /api/sessions/{id}/events) that are not
// session events: they are never stored and carry no id.
const (
	// EventStreamReady follows the replay: Sequence is the last stored
	// event sent, Session the session as it is now, so a client that
	// reconnects can repair what it missed (a status that changed while it
	// was away).
	EventStreamReady EventType = "stream.ready"
	// EventStreamHeartbeat is sent when nothing else was for a while
	// (15 s by default), as an event rather than a comment so a client can
	// tell a live stream from a dead one.
	EventStreamHeartbeat EventType = "stream.heartbeat"
	// EventStreamClosing is the last event of a stream the server ends
	// (it shuts down); Text says why.
	EventStreamClosing EventType = "stream.closing"
)

// ServerInfo is the content of $MX_CLAW_HOME/server.json (mode 0600),
// written by `mx-claw serve` while it runs.
type ServerInfo struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
}

// SessionMode is the answer of GET /api/sessions/{id}/mode and the body of
// PUT: the permission mode of the session's turns in the server, with the
// modes it may be switched to (in the answer).
type SessionMode struct {
	Mode  string   `json:"mode"`
	Modes []string `json:"modes,omitempty"`
}
