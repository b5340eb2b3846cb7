// Package tools defines what a tool is to the agent — a name, a description,
// a JSON schema for its arguments, its risk, whether calls may run in
// parallel, a one-line human summary of a call — and the Registry that
// validates a call's arguments against the schema before anything else
// happens.
//
// Tools never import the agent. The built-in tools live in tools/builtin;
// they reach the workspace only through the Env they are given.
//
// The package also owns the Workspace, the one place where the workspace
// boundary is enforced (paths resolved with symlinks followed, confined to
// the root and allowed directories, .git never written, file operations
// through os.Root), and Truncate, which caps text shown to the model.
// OutputFiles keeps the whole output of a call whose result is cut, and
// TempJournal lists the temporary files of atomic writes so that those a
// killed process left can be removed at the next start.
//
// Who may import it: the agent (to validate and run calls), the MCP
// adapter (to wrap MCP tools as Tools), tools/builtin and the agent's
// wiring. It imports no other mx-claw package.
package tools

import (
	"context"
	"encoding/json"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Risk is what a tool call may do to the user's machine. Permission rules
// and modes are decided on it.
type Risk string

// The risks a tool may declare.
const (
	RiskRead    Risk = "read"
	RiskWrite   Risk = "write"
	RiskExecute Risk = "execute"
)

// Info is what a tool is to the agent and the model: everything about it
// that does not depend on a call.
type Info struct {
	// Name is the name the model calls the tool by.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Schema is the JSON schema of the tool's arguments (an object). It is
	// shared: callers must not change it.
	Schema json.RawMessage
	// Risk is what a call may do.
	Risk Risk
	// ConcurrencySafe reports whether every call may run in parallel with
	// other concurrency-safe calls. A tool whose calls differ (a command
	// that only reads, one that writes) says false here; the agent decides
	// such calls one by one.
	ConcurrencySafe bool
}

// Tool is one action the model may ask for.
type Tool interface {
	// Info describes the tool. It returns the same value for the tool's
	// whole life and is called on every call, so it must be cheap (a
	// shared value, not one built per call).
	Info() Info
	// Summary describes a call in one short line for people ("Read
	// src/main.go"). args has passed schema validation.
	Summary(args json.RawMessage) string
	// Run executes a call whose args have passed schema validation. An
	// error is reported to the model as "Tool failed: <error>"; a Result
	// with IsError set is reported as it is.
	Run(ctx context.Context, env *Env, args json.RawMessage) (Result, error)
}

// Result is what a call returns to the model.
type Result struct {
	// Content is the text the model reads.
	Content string
	// IsError marks a result that reports a failure.
	IsError bool
	// Images are pictures the result carries (read_file of an image),
	// for models that read images (Env.Images).
	Images []protocol.Image
}

// Env is what a tool may use of the world: the workspace it works in and a
// way to stream output to the user. Its fields are set by the agent; tools
// must not keep it past Run.
type Env struct {
	// Workspace is the root every path argument is resolved against and
	// confined to.
	Workspace *Workspace
	// SessionID is the session the call belongs to.
	SessionID string
	// Output, if set, streams a piece of output to the user (tool.output).
	Output func(text string)
	// Files is the session's read-before-write guard: read tools record
	// what they read in it, write tools refuse to change an existing file
	// the session has not read or that changed on disk since. It lives as
	// long as the session. Nil means no guard: write tools skip the check.
	Files *FileTracker
	// SetTodos, if set, publishes the model's task list (todo_write) with
	// the session.
	SetTodos func(todos []protocol.Todo)
	// History, if set, returns the session's stored transcript, whole
	// (read_tool_output, search_history read it).
	History func() ([]protocol.Message, error)
	// Commands runs shell commands in the session's sandbox; nil runs
	// them without one (tests of the tools alone).
	Commands *execx.Runner
	// CallID is the id of the call being run.
	CallID string
	// Outputs, if set, keeps the whole output of calls whose result is
	// cut (run_command writes, read_tool_output reads).
	Outputs *OutputFiles
	// CommandSetup is shell text run_command evaluates in the command's
	// shell before each command, its output discarded: what SessionStart
	// hooks wrote to Claude Code's CLAUDE_ENV_FILE, so that their exports
	// reach the session's commands.
	CommandSetup string
	// Hidden, if set, reports whether the file or directory at a
	// canonical absolute path must be left out of what a tool reads: a
	// deny rule or a secret store covers it. grep, glob and list_dir skip
	// such entries and everything beneath them.
	Hidden func(abs string) bool
	// TrustedHost, if set, reports whether a permission rule names a host
	// (web_fetch(domain:HOST)): web_fetch may then reach it even on a
	// loopback or private address.
	TrustedHost func(host string) bool
	// Jobs, if set, runs the background processes of run_command
	// (background: true), which process_output reads and process_kill
	// stops. Nil means background processes are not available.
	Jobs *execx.Jobs
	// Images says the session's model reads images: read_file then
	// returns an image file as a picture instead of refusing it.
	Images bool
	// Editor, if set, is the user's editor: the file tools read and
	// write text files through it (see Editor).
	Editor Editor
}

// IsHidden reports whether env hides the canonical path abs (see
// Env.Hidden); nothing is hidden without an Env or a Hidden func.
func (env *Env) IsHidden(abs string) bool {
	return env != nil && env.Hidden != nil && env.Hidden(abs)
}
