package acp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// The MCP server the tests pass as the editor's: this test binary run
// again (TestMain sees helperEnv and serves over stdio instead of testing),
// as internal/mcp's tests do.
const helperEnv = "MX_CLAW_ACP_MCP_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		s := sdk.NewServer(&sdk.Implementation{Name: "editor-helper", Version: "1"}, nil)
		sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo a message."},
			func(_ context.Context, _ *sdk.CallToolRequest, in struct {
				Message string `json:"message"`
			}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Message}}}, nil, nil
			})
		sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Print the environment."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
			})
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "helper server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// editorServer is the helper as an editor passes it in session/new.
func editorServer(t *testing.T) mcpServer {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcpServer{Name: "editor", Command: exe, Args: []string{"-test.run=^$"},
		Env: []nameValue{{Name: helperEnv, Value: "1"}, {Name: "FROM_THE_EDITOR", Value: "yes"}}}
}

// toolResult returns the content of the tool result for call id in req.
func toolResult(req llmtest.Request, id string) string {
	for _, m := range req.Chat.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

// TestClientMCPServersStart: the MCP servers an editor passes with
// session/new are started through the MCP manager and their tools offered
// as mcp__<server>__<tool>; the server gets only what the editor declares
// plus the minimal base, never mx-claw's environment; session/load in
// another process binds the session's tools to the servers passed again.
func TestClientMCPServersStart(t *testing.T) {
	// Not parallel: it sets a variable of this process's environment.
	t.Setenv("MX_CLAW_TEST_PARENT_SECRET", "must-not-leak")
	home := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ac := newAgentIn(t, home, ws, app.Options{}, false,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "mcp__editor__echo", Arguments: `{"message":"hi"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "env", Name: "mcp__editor__env", Arguments: `{}`}}},
		llmtest.Text("done"))
	ac.must("initialize", initializeParams{ProtocolVersion: 1}, nil)
	var s newSessionResult
	ac.must("session/new", newSessionParams{CWD: ws, MCPServers: []mcpServer{editorServer(t),
		{Name: "bad name", Command: "x"}}}, &s)
	if stop, err := ac.prompt(s.SessionID, "use the editor's server"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, err)
	}
	reqs := ac.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if tools := strings.Join(reqs[0].Chat.Tools, ","); !strings.Contains(tools, "mcp__editor__echo") || !strings.Contains(tools, "mcp__editor__env") {
		t.Errorf("tools offered: %s", tools)
	}
	if got := toolResult(reqs[1], "e1"); !strings.Contains(got, "echo: hi") {
		t.Errorf("mcp__editor__echo result %q", got)
	}
	env := toolResult(reqs[2], "env")
	if !strings.Contains(env, "FROM_THE_EDITOR=yes") || !strings.Contains(env, "PATH=") {
		t.Errorf("the server's environment lacks what the editor declared or the base:\n%s", env)
	}
	if strings.Contains(env, "MX_CLAW_TEST_PARENT_SECRET") {
		t.Errorf("the server got mx-claw's environment:\n%s", env)
	}

	// Another process loads the session, the editor passing the server
	// again: the session's tools call it.
	ac2 := newAgentIn(t, home, ws, app.Options{}, false,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e2", Name: "mcp__editor__echo", Arguments: `{"message":"again"}`}}},
		llmtest.Text("done again"))
	ac2.must("initialize", initializeParams{ProtocolVersion: 1}, nil)
	ac2.must("session/load", loadSessionParams{SessionID: s.SessionID, CWD: ws, MCPServers: []mcpServer{editorServer(t)}}, nil)
	if stop, err := ac2.prompt(s.SessionID, "again"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt after load: %q %v", stop, err)
	}
	if got := toolResult(ac2.srv.ChatRequests()[1], "e2"); !strings.Contains(got, "echo: again") {
		t.Errorf("mcp__editor__echo after session/load: %q", got)
	}
}
