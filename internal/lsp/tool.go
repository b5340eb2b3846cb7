package lsp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed diagnostics.md
var toolDescription string

const toolSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file, relative to the workspace root."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`

// Tool is the diagnostics tool: a file's diagnostics on demand.
type Tool struct{ m *Manager }

// NewTool returns the diagnostics tool of m.
func NewTool(m *Manager) *Tool { return &Tool{m: m} }

type toolArgs struct {
	Path string `json:"path"`
}

// toolInfo is what the diagnostics tool is to the agent; Info returns it,
// shared. It is not concurrency-safe: calls on one server are serialised
// anyway.
var toolInfo = tools.Info{Name: "diagnostics", Description: toolDescription, Schema: json.RawMessage(toolSchema),
	Risk: tools.RiskRead}

func (*Tool) Info() tools.Info { return toolInfo }

func (*Tool) Summary(args json.RawMessage) string {
	var a toolArgs
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return "Diagnostics"
	}
	return "Diagnostics of " + a.Path
}

// Run checks one file.
func (t *Tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	var a toolArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return tools.Result{}, err
	}
	abs, display, err := env.Workspace.Resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	if env.IsHidden(abs) {
		return tools.Result{}, fmt.Errorf("%s may not be read", display)
	}
	cfg, ok := t.m.serverFor(abs)
	if !ok {
		return tools.Result{Content: fmt.Sprintf("No language server is configured for %s files.", extOf(abs))}, nil
	}
	root := env.Workspace.Root()
	if _, err := t.m.get(ctx, root, cfg); err != nil {
		return tools.Result{Content: fmt.Sprintf("No diagnostics for %s: %v.", display, err)}, nil
	}
	res, _ := t.m.diagnose(ctx, env.SessionID, root, []string{abs})
	if len(res) == 0 {
		return tools.Result{}, errors.New(cfg.Name + " could not check the file")
	}
	r := res[0]
	if !r.ok {
		return tools.Result{}, fmt.Errorf("%s gave no diagnostics for %s in time", cfg.Name, display)
	}
	var shown []Diagnostic
	for _, d := range r.diags {
		if d.Severity <= 2 || d.Severity == 0 {
			shown = append(shown, d)
		}
	}
	rel := relPath(root, abs)
	if len(shown) == 0 {
		return tools.Result{Content: fmt.Sprintf("%s reports no errors or warnings in %s.", cfg.Name, rel)}, nil
	}
	lines := append([]string{fmt.Sprintf("%s reports in %s:", cfg.Name, rel)}, list(rel, shown)...)
	return tools.Result{Content: strings.Join(lines, "\n")}, nil
}

func extOf(p string) string {
	if e := filepath.Ext(p); e != "" {
		return e
	}
	return filepath.Base(p)
}
