// Package mcpserve exposes mx-claw to other agents as an MCP server
// (`mx-claw mcp serve`, over stdio): a tool that runs a task in a
// workspace and returns the final answer and the session id, and tools to
// list sessions and read a transcript. The work is done by a Backend — the
// same core, store and permission settings as `mx-claw run`, with calls
// that need approval denied, since nobody can answer them here.
//
// It speaks MCP with the official Go SDK and knows nothing of the agent:
// the CLI wires a Backend on the app. Who may import it: the CLI.
// It imports protocol only.
package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Backend does what the tools ask.
type Backend interface {
	// RunTask runs one turn: in a new session of the workspace, or in the
	// session named. Its error is for the caller (the task did not run);
	// a turn that ran and failed is a TaskResult with Error set.
	RunTask(ctx context.Context, req TaskRequest) (TaskResult, error)
	// Sessions returns the sessions of a workspace ("" for all), newest
	// first, at most limit.
	Sessions(ctx context.Context, workspace string, limit int) ([]protocol.Session, error)
	// Transcript returns a session and its stored messages.
	Transcript(ctx context.Context, sessionID string) (*protocol.Session, []protocol.Message, error)
}

// TaskRequest is a run_task call.
type TaskRequest struct {
	Prompt string
	// Workspace is the directory to work in; "" for the server's.
	Workspace string
	// SessionID continues that session; "" starts a new one.
	SessionID string
	// Model is "provider/model"; "" for the session's or the default.
	Model         string
	MaxIterations int
}

// TaskResult is how a task ended.
type TaskResult struct {
	SessionID string `json:"sessionId"`
	// Answer is the model's final answer: the text of the turn's last
	// assistant message.
	Answer string `json:"answer"`
	// Status is the session's status after the turn (idle, failed,
	// cancelled).
	Status string `json:"status"`
	// Error is why the turn failed, if it did.
	Error string `json:"error,omitempty"`
}

// Options configure the server.
type Options struct {
	// Version is mx-claw's version, told to clients.
	Version string
	// MaxTranscriptBytes caps a read_transcript answer; 256 KiB if zero.
	MaxTranscriptBytes int
}

// NewServer returns the MCP server of b.
func NewServer(b Backend, opts Options) *sdk.Server {
	if opts.MaxTranscriptBytes <= 0 {
		opts.MaxTranscriptBytes = 256 << 10
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "mx-claw", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "mx-claw is a coding agent. run_task gives it a task in a workspace (a directory) and returns its " +
			"final answer and the session id; pass that id as sessionId to continue the conversation. " +
			"list_sessions and read_transcript show past sessions.",
	})
	h := handlers{b: b, opts: opts}
	sdk.AddTool(s, &sdk.Tool{Name: "run_task", Title: "Run a task with mx-claw",
		Description: "Run a task with the mx-claw coding agent in a workspace and return its final answer and session id. " +
			"The agent reads, searches, edits and runs commands there under the user's permission settings; " +
			"actions that need approval are denied, since nobody can approve them here."}, h.runTask)
	sdk.AddTool(s, &sdk.Tool{Name: "list_sessions", Title: "List mx-claw sessions",
		Description: "List mx-claw's sessions, newest first: of one workspace, or of all.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, h.listSessions)
	sdk.AddTool(s, &sdk.Tool{Name: "read_transcript", Title: "Read a session's transcript",
		Description: "Read the stored messages of an mx-claw session: the user's messages, the agent's answers, its tool calls and their results.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, h.readTranscript)
	return s
}

// Serve serves b over in and out (stdin and stdout) until the client
// goes away or ctx ends.
func Serve(ctx context.Context, b Backend, opts Options, in io.ReadCloser, out io.WriteCloser) error {
	err := NewServer(b, opts).Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
	if err == io.EOF || ctx.Err() != nil {
		return nil
	}
	return err
}

type handlers struct {
	b    Backend
	opts Options
}

// RunTaskInput is run_task's arguments.
type RunTaskInput struct {
	Prompt        string `json:"prompt" jsonschema:"the task, as you would tell a developer"`
	Cwd           string `json:"cwd,omitempty" jsonschema:"the workspace directory (absolute); default: the directory mx-claw mcp serve runs in"`
	SessionID     string `json:"sessionId,omitempty" jsonschema:"continue this session (from an earlier run_task) instead of starting a new one"`
	Model         string `json:"model,omitempty" jsonschema:"the model as provider/model; default: the session's or the configured one"`
	MaxIterations int    `json:"maxIterations,omitempty" jsonschema:"the most model steps this task may take"`
}

func (h handlers) runTask(ctx context.Context, _ *sdk.CallToolRequest, in RunTaskInput) (*sdk.CallToolResult, TaskResult, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, TaskResult{}, fmt.Errorf("prompt is empty; say what to do")
	}
	if in.MaxIterations < 0 {
		return nil, TaskResult{}, fmt.Errorf("maxIterations must be positive")
	}
	res, err := h.b.RunTask(ctx, TaskRequest{Prompt: in.Prompt, Workspace: in.Cwd, SessionID: in.SessionID,
		Model: in.Model, MaxIterations: in.MaxIterations})
	if err != nil {
		return nil, TaskResult{}, err
	}
	text := res.Answer
	if res.Error != "" {
		text = strings.TrimSpace(text + "\n\nThe task failed: " + res.Error)
	}
	text += fmt.Sprintf("\n\n[mx-claw session %s, %s]", res.SessionID, res.Status)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimSpace(text)}}, IsError: res.Error != ""}, res, nil
}

// ListSessionsInput is list_sessions' arguments.
type ListSessionsInput struct {
	Cwd   string `json:"cwd,omitempty" jsonschema:"only sessions of this workspace directory"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most sessions to list (default 20)"`
}

// SessionInfo is one session of list_sessions.
type SessionInfo struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Workspace    string    `json:"workspace"`
	Model        string    `json:"model"`
	Status       string    `json:"status"`
	MessageCount int64     `json:"messageCount"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// SessionList is list_sessions' result.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
}

func (h handlers) listSessions(ctx context.Context, _ *sdk.CallToolRequest, in ListSessionsInput) (*sdk.CallToolResult, SessionList, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	list, err := h.b.Sessions(ctx, in.Cwd, limit)
	if err != nil {
		return nil, SessionList{}, err
	}
	out := SessionList{Sessions: []SessionInfo{}}
	for _, s := range list {
		out.Sessions = append(out.Sessions, SessionInfo{ID: s.ID, Title: s.Title, Workspace: s.Workspace, Model: s.Model,
			Status: string(s.Status), MessageCount: s.MessageCount, UpdatedAt: s.UpdatedAt})
	}
	return nil, out, nil
}

// ReadTranscriptInput is read_transcript's arguments.
type ReadTranscriptInput struct {
	SessionID string `json:"sessionId" jsonschema:"the session to read"`
	AfterSeq  int64  `json:"afterSeq,omitempty" jsonschema:"only messages after this sequence number (to read on from an earlier answer)"`
}

// TranscriptMessage is one message of read_transcript.
type TranscriptMessage struct {
	Seq       int64               `json:"seq"`
	Role      string              `json:"role"`
	Content   string              `json:"content,omitempty"`
	ToolCalls []protocol.ToolCall `json:"toolCalls,omitempty"`
	ToolName  string              `json:"toolName,omitempty"`
	IsError   bool                `json:"isError,omitempty"`
}

// Transcript is read_transcript's result.
type Transcript struct {
	SessionID string              `json:"sessionId"`
	Status    string              `json:"status"`
	Messages  []TranscriptMessage `json:"messages"`
	// More says the answer was cut to fit; read on with afterSeq set to
	// the last message's seq.
	More bool `json:"more,omitempty"`
}

func (h handlers) readTranscript(ctx context.Context, _ *sdk.CallToolRequest, in ReadTranscriptInput) (*sdk.CallToolResult, Transcript, error) {
	if in.SessionID == "" {
		return nil, Transcript{}, fmt.Errorf("sessionId is required; list_sessions shows the sessions")
	}
	sess, msgs, err := h.b.Transcript(ctx, in.SessionID)
	if err != nil {
		return nil, Transcript{}, err
	}
	out := Transcript{SessionID: sess.ID, Status: string(sess.Status), Messages: []TranscriptMessage{}}
	size := 0
	for _, m := range msgs {
		if m.Seq <= in.AfterSeq || m.Role == protocol.RoleSystem {
			continue
		}
		tm := TranscriptMessage{Seq: m.Seq, Role: string(m.Role), Content: m.Content, ToolCalls: m.ToolCalls,
			ToolName: m.ToolName, IsError: m.IsError}
		b, _ := json.Marshal(tm)
		if len(b) > h.opts.MaxTranscriptBytes && len(out.Messages) == 0 {
			// One message alone is over the cap: its content is cut.
			keep := h.opts.MaxTranscriptBytes / 2
			for keep > 0 && keep < len(tm.Content) && !utf8.RuneStart(tm.Content[keep]) {
				keep--
			}
			if keep < len(tm.Content) {
				tm.Content = tm.Content[:keep] + fmt.Sprintf("\n… [%d bytes not shown]", len(tm.Content)-keep)
			}
			b, _ = json.Marshal(tm)
		}
		if size+len(b) > h.opts.MaxTranscriptBytes && len(out.Messages) > 0 {
			out.More = true
			break
		}
		size += len(b)
		out.Messages = append(out.Messages, tm)
	}
	return nil, out, nil
}
