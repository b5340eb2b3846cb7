// Package mcp connects mx-claw to MCP (Model Context Protocol) servers and
// offers their tools to the model as ordinary tools.Tools, named
// mcp__<server>__<tool> and taking exactly the server's input schema
// (DESIGN §6, §9). It uses the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) for the protocol; this package
// owns what the SDK leaves to a client: the configuration, which servers may
// start, how they start and stop, and what their results may cost.
//
// # Configuration
//
// Servers come from "mcpServers" in the user's settings.json and from a
// workspace's .mcp.json, in Claude Code's format: {"command", "args",
// "env"} for a server run as a child over stdio, {"type": "http", "url",
// "headers"} for a streamable-HTTP server ("sse" for the older HTTP+SSE
// transport). ${VAR} and ${VAR:-default} in those fields are read from
// mx-claw's environment — in a project's file never a variable of the
// secret chain (see Options.Reserved). Other keys of an entry are ignored.
// The user's "mcp" settings key tunes the client (see Settings). An
// editor driving mx-claw over ACP may pass servers for one session
// (SourceClient, ClientServer): used as given, no variables read.
//
// # Trust
//
// A workspace's .mcp.json names commands to run, so its servers are used
// only when the workspace is trusted and, one by one, after the user has
// approved the server (Approvals): an approval covers the entry as written
// and lapses when it changes. A symbolic link as .mcp.json is refused.
//
// # Processes
//
// A stdio server runs with only the environment its entry declares plus a
// small base (PATH, HOME, locale, …; see execx.DefaultEnvAllow) — never
// mx-claw's API keys or other secret-looking variables. It runs in its own
// process group, killed with everything it started when the server is
// stopped, and its stderr is appended to $MX_CLAW_HOME/logs/mcp-<name>.log.
// Servers from trusted configuration run outside the sandbox.
//
// A server starts at the session's first turn or at the first call of one
// of its tools (Settings.Startup), within a start timeout; each call has a
// timeout, and a result is capped twice: text over MaxResultBytes is cut
// (head and tail) for the model, and a single message over MaxMessageBytes
// stops the server. A server that exits or breaks its connection makes the
// call fail with a tool error; the next call starts it again.
//
// # Frozen tool lists
//
// A session's MCP tools are fixed at its first turn (invariant 4): the list
// is written to $MX_CLAW_HOME/mcp/sessions/<id>.json and read back by every
// later turn, in any process. In lazy mode the list may come from the last
// listing of the same server entry (mcp/tools/), so nothing starts before a
// tool is used.
//
// # Who may import it
//
// The app wiring and the CLI (`mx-claw mcp …`). It imports tools (the Tool
// interface it implements), execx (the environment allow-list) and
// safefile (the files it reads); nothing else of mx-claw.
package mcp
