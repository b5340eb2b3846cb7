package appserver

import (
	"encoding/json"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ProtocolVersion is the version of the app server's messages. It changes
// only when a message changes incompatibly.
const ProtocolVersion = 1

// ClientInfo names the program talking to the server.
type ClientInfo struct {
	Name    string `json:"name" jsonschema:"the client's name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// InitializeParams are the params of initialize, the first request.
type InitializeParams struct {
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
}

// ServerInfo names the server.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InitializeResult answers initialize.
type InitializeResult struct {
	ServerInfo      ServerInfo `json:"serverInfo"`
	ProtocolVersion int        `json:"protocolVersion" jsonschema:"the version of these messages"`
	// PermissionModes are the modes a thread may be started in.
	PermissionModes []string `json:"permissionModes"`
}

// Thread is a thread: an mx-claw session.
type Thread struct {
	ID        string                 `json:"id"`
	Title     string                 `json:"title"`
	Cwd       string                 `json:"cwd" jsonschema:"the session's workspace"`
	Model     string                 `json:"model"`
	Status    protocol.SessionStatus `json:"status" jsonschema:"idle, running, waiting_for_approval, failed or cancelled"`
	CreatedAt string                 `json:"createdAt" jsonschema:"RFC 3339"`
	UpdatedAt string                 `json:"updatedAt" jsonschema:"RFC 3339"`
	// PermissionMode is the mode of the thread's turns.
	PermissionMode string         `json:"permissionMode,omitempty"`
	Usage          protocol.Usage `json:"usage"`
	MessageCount   int64          `json:"messageCount"`
}

// ThreadStartParams start a thread in a workspace.
type ThreadStartParams struct {
	Cwd string `json:"cwd" jsonschema:"the workspace: an absolute directory"`
	// PermissionMode, if set, is the mode of the thread's turns in this
	// server: default, acceptEdits, plan or bypass.
	PermissionMode string `json:"permissionMode,omitempty"`
}

// ThreadResumeParams reopen a stored thread.
type ThreadResumeParams struct {
	ThreadID string `json:"threadId"`
	// AfterSequence, if set, asks for the thread's stored events after
	// this sequence (0: all of them) as notifications, sent before the
	// answer.
	AfterSequence *int64 `json:"afterSequence,omitempty"`
	// PermissionMode, if set, switches the mode of the thread's turns in
	// this server.
	PermissionMode string `json:"permissionMode,omitempty"`
}

// ThreadResult answers thread/start and thread/resume.
type ThreadResult struct {
	Thread Thread `json:"thread"`
}

// ThreadListParams filter thread/list.
type ThreadListParams struct {
	Cwd   string `json:"cwd,omitempty" jsonschema:"only threads of this workspace"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many, most recent first (0: all)"`
}

// ThreadListResult answers thread/list.
type ThreadListResult struct {
	Data []Thread `json:"data"`
}

// ThreadReadParams read a stored thread without resuming it.
type ThreadReadParams struct {
	ThreadID        string `json:"threadId"`
	IncludeMessages bool   `json:"includeMessages,omitempty" jsonschema:"include the stored transcript"`
	IncludeEvents   bool   `json:"includeEvents,omitempty" jsonschema:"include the stored events"`
}

// ThreadReadResult answers thread/read.
type ThreadReadResult struct {
	Thread   Thread             `json:"thread"`
	Messages []protocol.Message `json:"messages,omitempty"`
	Events   []protocol.Event   `json:"events,omitempty"`
}

// InputItem is one piece of a user's input.
type InputItem struct {
	Type string `json:"type" jsonschema:"text"`
	Text string `json:"text"`
}

// TurnStartParams send the user's input to a thread.
type TurnStartParams struct {
	ThreadID string      `json:"threadId"`
	Input    []InputItem `json:"input"`
	// Model, if set, switches the thread to this model ("provider/model")
	// from this turn on.
	Model string `json:"model,omitempty"`
}

// Turn is a turn of a thread.
type Turn struct {
	ID     string `json:"id"`
	Status string `json:"status" jsonschema:"inProgress"`
}

// TurnStartResult answers turn/start once the turn has started; its
// events follow as notifications.
type TurnStartResult struct {
	Turn Turn `json:"turn"`
}

// TurnInterruptParams cancel a thread's running turn.
type TurnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId,omitempty" jsonschema:"the turn to cancel; any running turn of the thread if empty"`
}

// Empty is the result of requests that return nothing.
type Empty struct{}

// ApprovalParams ask the client about a call that needs approval
// (item/tool/requestApproval, a request from the server).
type ApprovalParams struct {
	ThreadID   string          `json:"threadId"`
	TurnID     string          `json:"turnId"`
	RequestID  string          `json:"requestId" jsonschema:"the approval's id, as in the permission events"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Summary    string          `json:"summary" jsonschema:"the call, for people"`
	// Rule is the narrowest rule that would allow such calls, saved by
	// acceptForSession and acceptAlways.
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty" jsonschema:"why the call needs approval"`
}

// ApprovalResult is the client's answer to an approval.
type ApprovalResult struct {
	// Decision is accept (this call), acceptForSession (and calls its
	// rule covers, in this thread), acceptAlways (and in this workspace,
	// stored), decline, declineForSession (and such calls, in this
	// thread, without asking) or cancel (decline and interrupt the turn).
	Decision string `json:"decision" jsonschema:"accept, acceptForSession, acceptAlways, decline, declineForSession or cancel"`
}
