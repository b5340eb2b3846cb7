package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = "mcp__"

// maxNameLen is the longest tool name the providers accept.
const maxNameLen = 64

// maxDescription caps a tool's description as the model sees it.
const maxDescription = 8 << 10

// ToolName returns the name the model calls a server's tool by:
// mcp__<server>__<tool>, with characters the providers refuse replaced by
// '_'. A name over 64 bytes is cut and ends with a hash of the whole, so
// it stays unique.
func ToolName(server, tool string) string {
	name := Prefix + nameSafe(server) + "__" + nameSafe(tool)
	if len(name) <= maxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	tail := "_" + hex.EncodeToString(sum[:4])
	return name[:maxNameLen-len(tail)] + tail
}

// nameSafe keeps letters, digits, '_' and '-' and turns anything else
// into '_'.
func nameSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolSpec is one of a server's tools as the model is offered it: what a
// session's frozen list holds.
type ToolSpec struct {
	// Server is the server's name; Tool the tool's name on the server.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Name is the name the model calls it by (see ToolName).
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is the server's input schema, as it sent it.
	Schema json.RawMessage `json:"inputSchema"`
	// ReadOnlyHint is the server's annotation that the tool changes
	// nothing. It is a hint: it counts only for servers the user trusts
	// (Settings.TrustsReadOnly).
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
}

// Tool adapts one MCP tool to tools.Tool. Calls go through the agent's
// registry, permission check, hooks, audit and events like any other
// tool's; Run forwards the arguments, unchanged, to the server.
type Tool struct {
	spec ToolSpec
	info tools.Info
	// conn serves the calls; nil when the server is no longer configured
	// or allowed, which unavailable explains.
	conn        *conn
	settings    Settings
	unavailable string
}

var _ tools.Tool = (*Tool)(nil)

// Info is the tool as the model sees it: named mcp__<server>__<tool>,
// with the server's description (cut to maxDescription) and its input
// schema exactly. Risk is RiskRead for a tool the server marks read-only
// when the user trusts that server's hints, else RiskExecute (the call
// asks by default); read-only tools are concurrency-safe, since the
// server takes concurrent calls on one connection.
func (t *Tool) Info() tools.Info { return t.info }

// newTool returns the tool of sp with risk.
func newTool(sp ToolSpec, set Settings, risk tools.Risk) *Tool {
	d := strings.TrimSpace(sp.Description)
	if d == "" {
		d = "Tool " + sp.Tool + " of the MCP server " + sp.Server + "."
	}
	if len(d) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
		d = d[:cut] + "…"
	}
	return &Tool{spec: sp, settings: set, info: tools.Info{Name: sp.Name, Description: d, Schema: sp.Schema,
		Risk: risk, ConcurrencySafe: risk == tools.RiskRead}}
}

// Spec returns the tool as frozen in the session.
func (t *Tool) Spec() ToolSpec { return t.spec }

// Summary names the server, the tool and the arguments, compacted and
// cut to fit a line: what a person approves.
func (t *Tool) Summary(args json.RawMessage) string {
	var buf bytes.Buffer
	text := string(args)
	if json.Compact(&buf, args) == nil {
		text = buf.String()
	}
	if text == "{}" || text == "" {
		text = ""
	} else {
		const max = 160
		if len(text) > max {
			cut := max
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "…"
		}
		text = " " + text
	}
	return fmt.Sprintf("MCP %s: %s%s", t.spec.Server, t.spec.Tool, text)
}

// Run calls the tool on its server (starting it if needed) and returns
// the result as text capped at Settings.MaxResultBytes. A result the
// server marks as an error is an error result; a server that cannot be
// reached, stopped, timed out or sent too much is an error (see the
// package's errors).
func (t *Tool) Run(ctx context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	if t.conn == nil {
		return tools.Result{}, &callError{kind: ErrUnavailable, msg: t.unavailable}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := t.conn.call(ctx, t.settings, t.spec.Tool, args)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: resultText(res, t.settings.MaxResultBytes), IsError: res.IsError}, nil
}
