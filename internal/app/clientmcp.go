package app

import (
	"fmt"

	"github.com/mx-claw/mx-claw/internal/mcp"
)

// ClientMCPServer is an MCP server an editor passes for a session (ACP's
// session/new and session/load): run as a child over stdio (Command, Args,
// Env), or reached over HTTP (Type "http" or "sse", URL, Headers).
type ClientMCPServer struct {
	Name    string
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
}

// UseMCPServers gives a session the MCP servers its editor passed. They
// start through the App's MCP manager like the user's own servers (at the
// session's first turn, or at the first call of one of their tools), with
// only the environment the editor declares plus the allow-listed base, and
// their tools are named mcp__<server>__<tool>. A session's tools are fixed
// at its first turn: servers passed for a session that already had one
// serve only the tools it listed then. Entries that cannot be used are
// left out; the returned warnings say why.
func (d *Driver) UseMCPServers(sessionID string, servers []ClientMCPServer) []string {
	var list []*mcp.Server
	var warnings []string
	seen := map[string]bool{}
	for _, c := range servers {
		s, err := mcp.ClientServer(c.Name, c.Type, c.Command, c.Args, c.Env, c.URL, c.Headers)
		switch {
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("MCP server %q from the editor is not used: %v", c.Name, err))
			continue
		case seen[s.Name]:
			warnings = append(warnings, fmt.Sprintf("MCP server %q from the editor is given twice; the first is used", c.Name))
			continue
		}
		seen[s.Name] = true
		list = append(list, s)
	}
	if len(list) == 0 {
		d.a.clientMCP.Delete(sessionID)
	} else {
		d.a.clientMCP.Store(sessionID, list)
	}
	return warnings
}

// clientServers returns the MCP servers an editor passed for a session.
func (a *App) clientServers(sessionID string) []*mcp.Server {
	v, ok := a.clientMCP.Load(sessionID)
	if !ok {
		return nil
	}
	return v.([]*mcp.Server)
}
