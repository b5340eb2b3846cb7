// Package acp is mx-claw's Agent Client Protocol agent: `mx-claw acp` speaks
// ACP version 1 (JSON-RPC 2.0, one message per line on stdin and stdout) so
// that an editor such as Zed drives mx-claw as its agent.
//
// It maps the protocol's requests onto app.Driver — initialize,
// authenticate, session/new, session/load, session/list, session/prompt,
// session/cancel, session/set_mode — and the core's protocol.Events back
// onto session/update notifications (updates.go, the one mapping from
// events to ACP): streamed answer and reasoning chunks, tool calls with
// their kind, title, locations, content and diffs, the model's task list
// as a plan. A call that needs approval becomes session/request_permission
// with allow-once, allow-always, reject-once and reject-always options,
// which the Driver turns into mx-claw's approval scopes and grants. When
// the client offers its file system, the file tools read and write through
// fs/read_text_file and fs/write_text_file (editor.go), so the agent sees
// the editor's unsaved buffers. The MCP servers the client passes with
// session/new and session/load are handed to the app's MCP manager
// (app.Driver.UseMCPServers). session/load replays a stored session's
// events through the same mapping. Image blocks in prompts go to a model
// that reads images (images.go).
//
// What is not here: any agent logic. Turns, permissions, approvals and
// storage are the core's; this package only translates.
//
// Who may import it: internal/cli. It imports internal/app, internal/protocol
// and internal/jsonrpc.
package acp
