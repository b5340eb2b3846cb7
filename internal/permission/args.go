package permission

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ArgPaths returns the paths a built-in file tool's arguments name, as
// written (relative paths are relative to the workspace root): `path` of
// read_file, list_dir, glob, grep, write_file and edit_file ("." when
// list_dir, glob or grep omit it) and the `*** Add File:`, `*** Update
// File:`, `*** Delete File:` and `*** Move to:` paths of apply_patch's
// `patch`. Other tools give none, and MCP tools (see [IsMCPTool]) never
// do: their arguments mean what their server says, so they are judged as
// whole tools. The caller should resolve the paths to canonical ones
// (tools.Workspace.Resolve) for Request.Paths.
func ArgPaths(tool string, args json.RawMessage) ([]string, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	switch {
	case tool == CommandTool || IsMCPTool(tool):
		return nil, nil
	case tool == "apply_patch":
		var a struct {
			Patch string `json:"patch"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("decode apply_patch arguments: %w", err)
		}
		return patchPaths(a.Patch), nil
	}
	var a struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("decode %s arguments: %w", tool, err)
	}
	switch {
	case a.Path != nil && *a.Path != "":
		return []string{*a.Path}, nil
	case tool == "list_dir" || tool == "glob" || tool == "grep":
		return []string{"."}, nil
	}
	return nil, nil
}

// MCPPrefix starts the name of every MCP tool: mcp__<server>__<tool>.
const MCPPrefix = "mcp__"

// IsMCPTool reports whether a tool name is an MCP server's tool.
func IsMCPTool(name string) bool { return strings.HasPrefix(name, MCPPrefix) }

// patchPaths lists the file paths of an apply_patch text.
func patchPaths(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, m := range []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"} {
			if p, ok := strings.CutPrefix(line, m); ok {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// lexicalPath makes a path argument absolute without touching the file
// system: ~/ against home, relative against the workspace.
func lexicalPath(p, workspace, home string) string {
	switch {
	case (p == "~" || strings.HasPrefix(p, "~/")) && home != "":
		p = home + p[1:]
	case !filepath.IsAbs(p) && workspace != "":
		p = filepath.Join(workspace, p)
	}
	return filepath.Clean(p)
}
