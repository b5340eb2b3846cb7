package app

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/mcp"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// MCP returns the App's MCP manager, made on first use; Close stops its
// servers.
func (a *App) MCP() *mcp.Manager {
	a.mcpOnce.Do(func() {
		a.mcp = mcp.NewManager(mcp.Options{Home: a.Home, Version: a.opts.Version, Environ: os.Environ,
			Reserved: a.keyVariable, Logger: a.opts.Logger})
	})
	return a.mcp
}

// keyVariable reports the environment variables the secret chain reads
// API keys from (MX_CLAW_* are refused by package mcp in any case).
func (a *App) keyVariable(name string) bool {
	providers := []string{"openai", "deepseek"}
	for p := range a.Config.Providers {
		providers = append(providers, p)
	}
	for _, p := range providers {
		if slices.Contains(config.KeyEnvVars(p), name) {
			return true
		}
	}
	return false
}

// MCPConfig returns the MCP configuration of a workspace: the user's
// servers and settings, and the servers of the workspace's .mcp.json that
// may start (it is trusted and the user approved them).
func (a *App) MCPConfig(ctx context.Context, workspace string) (*mcp.Config, error) {
	trusted, err := a.Trusted(ctx, workspace)
	if err != nil {
		return nil, err
	}
	user, _, err := a.settings(workspace, trusted)
	if err != nil {
		return nil, err
	}
	cfg, err := mcp.Load(mcp.LoadOptions{Home: a.Home, Workspace: workspace, UserPath: user.Path,
		UserServers: user.Other["mcpServers"], UserSettings: user.Other["mcp"], Trusted: trusted})
	if err != nil {
		return nil, err
	}
	// Enabled plugins' servers (extensions.go) join the user's.
	a.addPluginServers(cfg)
	return cfg, nil
}

// sessionTools is the agent's SessionTools: the built-in tools and the
// session's MCP tools, frozen at its first turn (see mcp.Manager.
// SessionTools). A new session is told about the project's servers that
// may not start, and why.
func (a *App) sessionTools(ctx context.Context, sess *protocol.Session) (*tools.Registry, []string, error) {
	cfg, err := a.MCPConfig(ctx, sess.Workspace)
	if err != nil {
		return nil, nil, err
	}
	cfg = cfg.WithClient(a.clientServers(sess.ID))
	first := sess.MessageCount == 0
	extra, warnings, err := a.MCP().SessionTools(ctx, mcp.SessionRequest{SessionID: sess.ID, Workspace: sess.Workspace,
		First: first, Config: cfg})
	if err != nil {
		return nil, warnings, err
	}
	if first {
		for _, h := range cfg.Held {
			warnings = append(warnings, fmt.Sprintf("MCP server %q of %s is not started: %s", h.Server.Name, h.Server.Path, h.Reason))
		}
	}
	reg, err := a.tools.With(extra...)
	if err != nil {
		return nil, warnings, fmt.Errorf("MCP tools: %w", err)
	}
	return reg, warnings, nil
}
