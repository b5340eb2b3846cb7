// Package plugins reads the plugins a person installs under
// $MX_CLAW_HOME/plugins/<folder>/ and remembers which ones they enabled.
// A plugin bundles skills, slash commands, hooks and MCP servers; it acts
// only once enabled (`mx-claw plugins enable NAME`), since installing a
// folder must not be enough to run its hooks.
//
// The manifest is Claude Code's .claude-plugin/plugin.json, read
// unchanged, or the same fields in plugin.json at the folder's root:
// name, version, description, and where the parts are — "skills",
// "commands" (a folder or a list of files), "hooks" (a file, or the hooks
// object inline) and "mcpServers" (a file, or the servers inline). Parts
// the manifest does not name are looked for where Claude Code puts them:
// skills/, commands/, hooks/hooks.json and .mcp.json. Paths must stay
// inside the plugin's folder; ${CLAUDE_PLUGIN_ROOT} in hook commands and
// server definitions becomes the folder's path. Agents, output styles and
// LSP servers load and are not used; a notice says so.
//
// Which plugins are enabled is kept in $MX_CLAW_HOME/plugins.json,
// written atomically.
//
// Who may import it: the application's wiring (app) and the CLI. It
// imports safefile.
package plugins
