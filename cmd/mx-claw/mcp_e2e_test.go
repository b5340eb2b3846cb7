package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// serveClient starts `mx-claw mcp serve` in e's workspace and connects the
// Go SDK's client to it.
func (e *env) serveClient(ctx context.Context, args ...string) *sdk.ClientSession {
	e.t.Helper()
	cmd := e.command(ctx, append([]string{"mcp", "serve"}, args...)...)
	cmd.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("connect to mx-claw mcp serve: %v", err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestMCPServeRunTask drives `mx-claw mcp serve` with the Go SDK's
// client: a task runs against the fake model and its answer comes back
// with the session id; the session is listed and its transcript read; a
// call that needs approval is denied, as nobody can give it.
func TestMCPServeRunTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Text("The answer is 42."),
		llmtest.Call("write_file", `{"path":"x.txt","content":"x"}`),
		llmtest.Text("I could not write it."))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := e.serveClient(ctx)
	var names []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"list_sessions", "read_transcript", "run_task"}) {
		t.Fatalf("tools %v", names)
	}
	var task struct {
		SessionID string `json:"sessionId"`
		Answer    string `json:"answer"`
		Status    string `json:"status"`
	}
	res := callTool(t, cs, "run_task", map[string]any{"prompt": "what is the answer?"}, &task)
	if res.IsError || task.Answer != "The answer is 42." || task.SessionID == "" || task.Status != "idle" {
		t.Fatalf("run_task: %+v %q", task, resultText(res))
	}
	if !strings.Contains(resultText(res), "The answer is 42.") || !strings.Contains(resultText(res), task.SessionID) {
		t.Fatalf("run_task text: %q", resultText(res))
	}
	// The same session, continued: the write needs approval and is denied.
	var again struct {
		SessionID string `json:"sessionId"`
		Answer    string `json:"answer"`
	}
	callTool(t, cs, "run_task", map[string]any{"prompt": "write x.txt", "sessionId": task.SessionID}, &again)
	if again.SessionID != task.SessionID || again.Answer != "I could not write it." {
		t.Fatalf("second task: %+v", again)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "x.txt")); err == nil {
		t.Fatal("a call that needed approval ran")
	}
	reqs := e.srv.ChatRequests()
	if got := toolResults(reqs[len(reqs)-1]); !strings.Contains(firstOf(got), "nobody can approve it") {
		t.Fatalf("the model was not told the write was denied: %v", got)
	}

	var list struct {
		Sessions []struct {
			ID        string `json:"id"`
			Workspace string `json:"workspace"`
		} `json:"sessions"`
	}
	callTool(t, cs, "list_sessions", map[string]any{"cwd": e.ws}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != task.SessionID || list.Sessions[0].Workspace != e.ws {
		t.Fatalf("list_sessions: %+v", list)
	}
	var tr struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	callTool(t, cs, "read_transcript", map[string]any{"sessionId": task.SessionID}, &tr)
	if len(tr.Messages) < 4 || tr.Messages[0].Role != "user" || tr.Messages[0].Content != "what is the answer?" ||
		tr.Messages[1].Content != "The answer is 42." {
		t.Fatalf("read_transcript: %+v", tr.Messages)
	}
	if res := callTool(t, cs, "read_transcript", map[string]any{"sessionId": "nope"}, nil); !res.IsError {
		t.Fatal("read_transcript of a missing session did not fail")
	}
}

func firstOf(m map[string]string) string {
	for _, v := range m {
		return v
	}
	return ""
}

// selfServer is a settings entry that runs mx-claw's own MCP server (a
// real stdio server built with the Go SDK) on the test's home.
func (e *env) selfServer() string {
	return fmt.Sprintf(`{"command": %q, "args": ["mcp", "serve"], "env": {"MX_CLAW_HOME": %q}}`, binPath, e.home)
}

func hasTool(req llmtest.Request, name string) bool { return slices.Contains(req.Chat.Tools, name) }

// TestMCPToolInRun: a user's server's tools are offered to the model as
// mcp__<server>__<tool>; a call asks by default (denied in a headless
// run) even for a tool marked read-only, runs once the user trusts the
// server's read-only hints or allows it by rule, and every call is
// audited and reported like a built-in tool's.
func TestMCPToolInRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	settings := func(extra string) {
		e.writeHome("settings.json", fmt.Sprintf(`{"mcpServers": {"self": %s}%s}`, e.selfServer(), extra))
	}
	steps := func() {
		e.srv.Enqueue(llmtest.Call("mcp__self__list_sessions", `{"limit": 5}`), llmtest.Text("done"))
	}
	// By default the call asks, and nobody can answer in a headless run.
	settings("")
	steps()
	r := e.run("", "run", "--json", "list them")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if !hasTool(reqs[0], "mcp__self__run_task") || !hasTool(reqs[0], "mcp__self__list_sessions") {
		t.Fatalf("tools offered: %v", reqs[0].Chat.Tools)
	}
	if got := firstOf(toolResults(reqs[1])); !strings.Contains(got, "needs the user's approval") || !strings.Contains(got, "mcp__self__list_sessions") {
		t.Fatalf("default: result %q", got)
	}
	// Trusting the server's read-only hints lets list_sessions run.
	settings(`, "mcp": {"trustReadOnlyHints": ["self"]}`)
	steps()
	r = e.run("", "run", "--json", "list them")
	reqs = e.srv.ChatRequests()
	got := firstOf(toolResults(reqs[len(reqs)-1]))
	if r.code != 0 || !strings.Contains(got, `"sessions"`) {
		t.Fatalf("trusted hints: exit %d, result %q", r.code, got)
	}
	var completed *protocol.Event
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventToolCompleted && ev.ToolName == "mcp__self__list_sessions" {
			completed = &ev
		}
	}
	if completed == nil || completed.OK == nil || !*completed.OK || !strings.Contains(completed.Summary, "MCP self: list_sessions") {
		t.Fatalf("tool.completed: %+v", completed)
	}
	// An allow rule for the server's tools does it too.
	settings(`, "permissions": {"allow": ["mcp__self__*"]}`)
	steps()
	r = e.run("", "run", "--json", "list them")
	reqs = e.srv.ChatRequests()
	if got := firstOf(toolResults(reqs[len(reqs)-1])); r.code != 0 || !strings.Contains(got, `"sessions"`) {
		t.Fatalf("allow rule: exit %d, result %q", r.code, got)
	}
	audit := e.run("", "permissions", "audit", "--json")
	if !strings.Contains(audit.stdout, `"tool": "mcp__self__list_sessions"`) || !strings.Contains(audit.stdout, "allow rule mcp__self__*") {
		t.Fatalf("audit:\n%s", audit.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.home, "logs", "mcp-self.log")); err != nil {
		t.Errorf("no server log: %v", err)
	}
}

// TestMCPProjectServerNeedsTrustAndApproval: nothing of an untrusted
// project's .mcp.json starts; nor of a trusted one's before the user
// approves the server; after `mcp approve` it does.
func TestMCPProjectServerNeedsTrustAndApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	marker := filepath.Join(e.ws, "started")
	e.writeWS(".mcp.json", `{"mcpServers": {"marker": {"command": "sh", "args": ["-c", "touch started"]}}}`)
	warnings := func(r result) string {
		var out []string
		for _, ev := range r.events(t) {
			if ev.Type == protocol.EventWarning {
				out = append(out, ev.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	r := e.run("", "run", "--json", "hello")
	if _, err := os.Stat(marker); err == nil || r.code != 0 {
		t.Fatalf("an untrusted project's server started (exit %d)", r.code)
	}
	if w := warnings(r); !strings.Contains(w, `MCP server "marker"`) || !strings.Contains(w, "not trusted") {
		t.Fatalf("untrusted: warnings %q", w)
	}
	r = e.run("", "run", "--json", "--trust", "hello")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a trusted project's server started before it was approved")
	}
	if w := warnings(r); !strings.Contains(w, "mx-claw mcp approve marker") {
		t.Fatalf("not approved: warnings %q", w)
	}
	l := e.run("", "mcp", "list", "--json")
	if !strings.Contains(l.stdout, `"status": "needs approval"`) {
		t.Fatalf("mcp list: %s %s", l.stdout, l.stderr)
	}
	a := e.run("", "mcp", "approve", "marker")
	if a.code != 0 || !strings.Contains(a.stdout, "sh -c touch started") {
		t.Fatalf("mcp approve: %d %s %s", a.code, a.stdout, a.stderr)
	}
	r = e.run("", "run", "--json", "hello")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved server did not start: %s", warnings(r))
	}
	if w := warnings(r); !strings.Contains(w, `"marker" did not start`) {
		t.Fatalf("approved: warnings %q", w)
	}
	// A symlinked .mcp.json is refused.
	os.Remove(filepath.Join(e.ws, ".mcp.json"))
	os.Symlink(filepath.Join(e.home, "settings.json"), filepath.Join(e.ws, ".mcp.json"))
	if r := e.run("", "run", "--json", "hello"); !strings.Contains(warnings(r), "symbolic link") {
		t.Fatalf("symlinked .mcp.json: %q", warnings(r))
	}
}

// TestMCPCommands: add, list, get (secrets hidden), test and remove, with
// the settings file's other keys kept.
func TestMCPCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.writeHome("settings.json", `{"permissions": {"deny": ["run_command(rm:*)"]}, "theme": "dark"}`)
	r := e.run("", "mcp", "add", "-e", "MX_CLAW_HOME="+e.home, "-e", "SERVICE_TOKEN=literal-secret", "self", binPath, "mcp", "serve")
	if r.code != 0 {
		t.Fatalf("add: %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "SERVICE_TOKEN is written") {
		t.Errorf("add gave no note about the literal secret: %s", r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(e.home, "settings.json"))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top["permissions"] == nil || string(top["theme"]) != `"dark"` {
		t.Fatalf("settings after add:\n%s", data)
	}
	if r := e.run("", "mcp", "add", "self", "x"); r.code != 2 {
		t.Errorf("adding a second server of the same name: exit %d", r.code)
	}
	r = e.run("", "mcp", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "self") || !strings.Contains(r.stdout, "ready") {
		t.Fatalf("list: %s %s", r.stdout, r.stderr)
	}
	r = e.run("", "mcp", "get", "self")
	if r.code != 0 || strings.Contains(r.stdout, "literal-secret") || !strings.Contains(r.stdout, "SERVICE_TOKEN=<hidden>") {
		t.Fatalf("get: %s", r.stdout)
	}
	r = e.run("", "mcp", "test", "self", "--call", "list_sessions")
	if r.code != 0 || !strings.Contains(r.stdout, "mcp__self__run_task") || !strings.Contains(r.stdout, `"sessions"`) {
		t.Fatalf("test: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "mcp", "remove", "self"); r.code != 0 {
		t.Fatalf("remove: %s", r.stderr)
	}
	if r := e.run("", "mcp", "get", "self"); r.code != 2 {
		t.Fatalf("get after remove: %d", r.code)
	}
	data, _ = os.ReadFile(filepath.Join(e.home, "settings.json"))
	if !strings.Contains(string(data), "run_command(rm:*)") {
		t.Fatalf("settings lost their rules:\n%s", data)
	}
	// A broken server gives a clear failure from `mcp test`.
	e.run("", "mcp", "add", "broken", "sh", "-c", "echo cannot start >&2; exit 4")
	r = e.run("", "mcp", "test", "broken")
	if r.code != 1 || !strings.Contains(r.stderr, "exit status 4") || !strings.Contains(r.stderr, "cannot start") {
		t.Fatalf("test of a broken server: %d %s", r.code, r.stderr)
	}
}

// TestMCPEverythingInRun calls a tool of the real reference server from
// npm in a headless run (skipped when node or the package is absent).
func TestMCPEverythingInRun(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; `make test-deps` installs it")
	}
	dir := os.Getenv("MX_CLAW_TEST_NPM_DIR")
	if dir == "" {
		cache, _ := os.UserCacheDir()
		dir = filepath.Join(cache, "mx-claw-test", "npm")
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-everything is not installed in %s; run `make test-deps`", dir)
	}
	e := newEnv(t, llmtest.Call("mcp__everything__echo", `{"message":"from the model"}`), llmtest.Text("done"))
	e.writeHome("settings.json", fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": [%q, "stdio"]}},
		"mcp": {"trustReadOnlyHints": true}}`, node, script))
	r := e.run("", "run", "--json", "echo something")
	reqs := e.srv.ChatRequests()
	if r.code != 0 || len(reqs) != 2 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if got := firstOf(toolResults(reqs[1])); got != "Echo: from the model" {
		t.Fatalf("echo result %q", got)
	}
}

// TestMCPToolHooks: PreToolUse hooks see MCP calls like any other, by a
// matcher on the mcp__ name, and may block them.
func TestMCPToolHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("mcp__self__list_sessions", `{}`), llmtest.Text("done"))
	hook := filepath.Join(e.home, "block.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/bash\ncat > \"$(dirname \"$0\")/hook-input.json\"; echo 'no MCP here' >&2; exit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.writeHome("settings.json", fmt.Sprintf(`{"mcpServers": {"self": %s},
		"permissions": {"allow": ["mcp__self__*"]},
		"hooks": {"PreToolUse": [{"matcher": "mcp__self__.*", "hooks": [{"type": "command", "command": %q}]}]}}`, e.selfServer(), hook))
	if r := e.run("", "run", "go"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if got := firstOf(toolResults(e.srv.ChatRequests()[1])); got != "Tool failed: blocked by a hook: no MCP here" {
		t.Fatalf("result %q", got)
	}
	input, err := os.ReadFile(filepath.Join(e.home, "hook-input.json"))
	if err != nil || !strings.Contains(string(input), `"tool_name":"mcp__self__list_sessions"`) {
		t.Fatalf("hook input: %s %v", input, err)
	}
}
