package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// Tests against real MCP servers from npm: @modelcontextprotocol/
// server-everything and server-filesystem, installed by `make test-deps`
// into $MX_CLAW_TEST_NPM_DIR (default: <user cache dir>/mx-claw-test/npm)
// and run with node, offline. Without node or the packages they skip,
// saying so.

// npmPackages returns node and the directory holding the packages'
// node_modules, or skips the test.
func npmPackages(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; `make test-deps` installs it and the MCP servers these tests run")
	}
	dir = os.Getenv("MX_CLAW_TEST_NPM_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory for the npm packages: %v", err)
		}
		dir = filepath.Join(cache, "mx-claw-test", "npm")
	}
	for _, pkg := range []string{"server-everything", "server-filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")); err != nil {
			t.Skipf("@modelcontextprotocol/%s is not installed in %s; run `make test-deps`", pkg, dir)
		}
	}
	return node, dir
}

func everything(t *testing.T, name string, env map[string]string) *Server {
	node, dir := npmPackages(t)
	return &Server{Name: name, Source: SourceUser, Transport: TransportStdio, Command: node,
		Args: []string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}, Env: env}
}

func filesystem(t *testing.T, name, root string) *Server {
	node, dir := npmPackages(t)
	return &Server{Name: name, Source: SourceUser, Transport: TransportStdio, Command: node,
		Args: []string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), root}}
}

// rawTools asks a server for its tools over a JSON-RPC exchange of our
// own, without the SDK: what the server really sends.
func rawTools(t *testing.T, s *Server) map[string]json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command, s.Args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		got := map[string]json.RawMessage{}
		for _, tl := range msg.Result.Tools {
			got[tl.Name] = tl.InputSchema
		}
		return got
	}
	t.Fatalf("no tools/list answer: %v", sc.Err())
	return nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestEverythingServer lists and calls the reference server's tools; each
// tool's schema is exactly what the server sent, and the registry takes
// them all.
func TestEverythingServer(t *testing.T) {
	t.Parallel()
	s := everything(t, "everything", nil)
	m := newTestManager(t)
	ws := t.TempDir()
	specs, problems, err := m.List(context.Background(), ws, s, fastSettings())
	if err != nil || len(problems) > 0 {
		t.Fatalf("List: %v %v", err, problems)
	}
	raw := rawTools(t, s)
	if len(specs) < len(raw) || len(raw) < 10 {
		t.Fatalf("%d tools, the server lists %d", len(specs), len(raw))
	}
	var ts []tools.Tool
	listed := map[string]bool{}
	for _, sp := range specs {
		listed[sp.Tool] = true
		if sp.Name != ToolName("everything", sp.Tool) {
			t.Errorf("tool %s named %s", sp.Tool, sp.Name)
		}
		if _, ok := raw[sp.Tool]; !ok {
			// The server offers some tools only to clients with a
			// capability (roots, …) the raw exchange does not declare.
			t.Logf("tool %s is offered to mx-claw only", sp.Tool)
		} else if !sameJSON(sp.Schema, raw[sp.Tool]) {
			t.Errorf("%s: schema\n%s\nthe server sent\n%s", sp.Tool, sp.Schema, raw[sp.Tool])
		}
		ts = append(ts, newTool(sp, Settings{}, tools.RiskExecute))
	}
	for name := range raw {
		if !listed[name] {
			t.Errorf("the server's tool %s is missing", name)
		}
	}
	if _, err := tools.NewRegistry(ts...); err != nil {
		t.Fatalf("registry: %v", err)
	}
	set := fastSettings()
	for _, c := range []struct{ tool, args, want string }{
		{"echo", `{"message":"hello"}`, "Echo: hello"},
		{"get-sum", `{"a":2,"b":3}`, "5"},
		{"get-tiny-image", `{}`, "[image/png image,"},
	} {
		res, err := m.Call(context.Background(), ws, s, set, c.tool, json.RawMessage(c.args))
		if err != nil || res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s: %+v, %v; want %q", c.tool, res, err, c.want)
		}
	}
	// Arguments the server refuses come back as an error, not a crash.
	res, err := m.Call(context.Background(), ws, s, set, "get-sum", json.RawMessage(`{"a":"two"}`))
	if err == nil && !res.IsError {
		t.Errorf("bad arguments: %+v", res)
	}
}

// TestEverythingEnvironment is the leak test: the server dumps its
// environment, which holds what its entry declares and the allow-listed
// base, and no key or token of mx-claw's environment.
func TestEverythingEnvironment(t *testing.T) {
	t.Parallel()
	s := everything(t, "env-dump", map[string]string{"DECLARED_SETTING": "declared-value"})
	m := newTestManager(t)
	res, err := call(t, m, s, fastSettings(), "get-env", `{}`)
	if err != nil || res.IsError {
		t.Fatalf("get-env: %+v %v", res, err)
	}
	if !strings.Contains(res.Content, "declared-value") || !strings.Contains(res.Content, "PATH") {
		t.Fatalf("environment lacks the declared variable or PATH:\n%s", res.Content)
	}
	for _, secret := range []string{"sk-test", "ghp-test", "aws-test", "OPENAI_API_KEY", "MX_CLAW", "GITHUB_TOKEN", "SOME_SETTING"} {
		if strings.Contains(res.Content, secret) {
			t.Errorf("the server's environment holds %s:\n%s", secret, res.Content)
		}
	}
}

// TestEverythingHangAndCrash: a call that runs past the call timeout
// fails and the server stays; a server killed during a call gives a tool
// error and starts again on the next call.
func TestEverythingHangAndCrash(t *testing.T) {
	t.Parallel()
	s := everything(t, "slow", nil)
	m := newTestManager(t)
	ws := t.TempDir()
	set := fastSettings()
	set.CallTimeout = time.Second
	_, err := m.Call(context.Background(), ws, s, set, "trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":3}`))
	if !errors.Is(err, ErrCallTimeout) {
		t.Fatalf("long operation: %v, want ErrCallTimeout", err)
	}
	_, pid := m.Running(ws, s)
	if res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"after"}`)); err != nil || !strings.Contains(res.Content, "after") {
		t.Fatalf("after the timeout: %+v %v", res, err)
	}
	if _, pid2 := m.Running(ws, s); pid2 != pid {
		t.Fatalf("the server was restarted after a timeout (%d, %d)", pid, pid2)
	}
	set.CallTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), ws, s, set, "trigger-long-running-operation", json.RawMessage(`{"duration":20,"steps":2}`))
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGKILL)
	select {
	case err := <-done:
		if !errors.Is(err, ErrServerStopped) || !strings.Contains(err.Error(), "signal: killed") {
			t.Fatalf("killed during a call: %v, want ErrServerStopped", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call did not end when the server died")
	}
	res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"again"}`))
	if err != nil || !strings.Contains(res.Content, "again") {
		t.Fatalf("after the crash: %+v %v", res, err)
	}
	if _, pid3 := m.Running(ws, s); pid3 == pid || pid3 == 0 {
		t.Fatalf("no new server process (%d)", pid3)
	}
}

// TestFilesystemServer reads files through the filesystem server: a small
// one whole, a big one cut for the model, one over the message cap
// refused (the server stops, and starts again for the next call).
func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "small.txt"), []byte("hello from a file\n"), 0o644)
	var big strings.Builder
	for i := 0; big.Len() < 3<<20; i++ {
		fmt.Fprintf(&big, "line %d of a big file\n", i)
	}
	os.WriteFile(filepath.Join(root, "big.txt"), []byte(big.String()), 0o644)
	m := newTestManager(t)
	ws := t.TempDir()

	s := filesystem(t, "fs", root)
	set := fastSettings()
	set.MaxResultBytes = 16 << 10
	read := func(s *Server, set Settings, name string) (tools.Result, error) {
		args, _ := json.Marshal(map[string]string{"path": filepath.Join(root, name)})
		return m.Call(context.Background(), ws, s, set, "read_text_file", args)
	}
	res, err := read(s, set, "small.txt")
	if err != nil || res.Content != "hello from a file\n" {
		t.Fatalf("small file: %+v %v", res, err)
	}
	res, err = read(s, set, "big.txt")
	if err != nil || len(res.Content) > 16<<10 || !strings.HasPrefix(res.Content, "line 0 of") || !strings.Contains(res.Content, "bytes omitted") {
		t.Fatalf("big file: %d bytes, %v", len(res.Content), err)
	}
	res, err = m.Call(context.Background(), ws, s, set, "read_text_file", json.RawMessage(`{"path":"/etc/hostname"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "denied") {
		t.Fatalf("outside its root: %+v %v", res, err)
	}

	capped := filesystem(t, "fs-capped", root)
	set.MaxMessageBytes = 1 << 20
	if _, err := read(capped, set, "big.txt"); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("over the message cap: %v, want ErrResultTooLarge", err)
	}
	if res, err := read(capped, set, "small.txt"); err != nil || res.Content != "hello from a file\n" {
		t.Fatalf("after the cap: %+v %v", res, err)
	}
}
