package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// fastSettings are settings with short timeouts for tests.
func fastSettings() Settings {
	s := DefaultSettings()
	s.StartTimeout = 20 * time.Second
	s.CallTimeout = 20 * time.Second
	return s
}

// helperServer is a stdio entry that runs this test binary as a server.
func helperServer(name string, env map[string]string) *Server {
	e := map[string]string{helperEnv: "1"}
	for k, v := range env {
		e[k] = v
	}
	return &Server{Name: name, Source: SourceUser, Transport: TransportStdio, Command: os.Args[0], Env: e}
}

// testEnviron is mx-claw's environment in the tests: the real PATH and
// HOME, and secrets that must never reach a server.
func testEnviron() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"LANG=C.UTF-8",
		"OPENAI_API_KEY=sk-test-openai-secret",
		"DEEPSEEK_API_KEY=sk-test-deepseek-secret",
		"MX_CLAW_API_KEY_FAKE=sk-test-custom-secret",
		"MX_CLAW_SECRET_COMMAND=/bin/print-secrets",
		"GITHUB_TOKEN=ghp-test-token",
		"AWS_SECRET_ACCESS_KEY=aws-test-secret",
		"SOME_SETTING=plain",
	}
}

func newTestManager(t *testing.T) *Manager {
	t.Helper()
	m := NewManager(Options{Home: t.TempDir(), Version: "test", Environ: testEnviron,
		Reserved: func(n string) bool { return n == "OPENAI_API_KEY" || n == "DEEPSEEK_API_KEY" }})
	t.Cleanup(func() { m.Close() })
	return m
}

func call(t *testing.T, m *Manager, s *Server, set Settings, tool, args string) (tools.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return m.Call(ctx, t.TempDir(), s, set, tool, json.RawMessage(args))
}

func TestStdioListAndCall(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("helper", nil)
	ws := t.TempDir()
	specs, problems, err := m.List(context.Background(), ws, s, fastSettings())
	if err != nil || len(problems) > 0 {
		t.Fatalf("List: %v %v", err, problems)
	}
	var names []string
	for _, sp := range specs {
		names = append(names, sp.Name)
	}
	want := []string{"mcp__helper__big", "mcp__helper__crash", "mcp__helper__echo", "mcp__helper__env", "mcp__helper__fail", "mcp__helper__sleep"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	res, err := m.Call(context.Background(), ws, s, fastSettings(), "echo", json.RawMessage(`{"message":"hi"}`))
	if err != nil || res.Content != "echo: hi" || res.IsError {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	res, err = m.Call(context.Background(), ws, s, fastSettings(), "fail", json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "it failed") {
		t.Fatalf("fail = %+v, %v; want an error result", res, err)
	}
	// The server's stderr went to its log.
	log, err := os.ReadFile(LogPath(m.opts.Home, "helper"))
	if err != nil || !strings.Contains(string(log), "helper server: starting") {
		t.Fatalf("log: %v\n%s", err, log)
	}
}

// TestCrashRestarts: a server that dies during a call gives a tool error,
// and the next call starts it again.
func TestCrashRestarts(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("crashy", nil)
	ws := t.TempDir()
	set := fastSettings()
	if _, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"a"}`)); err != nil {
		t.Fatal(err)
	}
	_, pid1 := m.Running(ws, s)
	_, err := m.Call(context.Background(), ws, s, set, "crash", json.RawMessage(`{}`))
	if !errors.Is(err, ErrServerStopped) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("crash: err = %v, want ErrServerStopped with the exit status", err)
	}
	res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"b"}`))
	if err != nil || res.Content != "echo: b" {
		t.Fatalf("after the crash: %+v, %v", res, err)
	}
	if _, pid2 := m.Running(ws, s); pid2 == 0 || pid2 == pid1 {
		t.Fatalf("pids %d then %d: want a new process", pid1, pid2)
	}
	// Killed between calls: the next call starts it again too.
	_, pid := m.Running(ws, s)
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, func() bool { running, _ := m.Running(ws, s); return !running })
	if res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"c"}`)); err != nil || res.Content != "echo: c" {
		t.Fatalf("after a kill: %+v, %v", res, err)
	}
}

// TestEnvironmentLeak: the server sees the variables its entry declares
// and the allow-listed base, never mx-claw's keys or other secrets.
func TestEnvironmentLeak(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("envdump", map[string]string{"DECLARED": "yes", "FROM_ENV": "${SOME_SETTING}"})
	res, err := call(t, m, s, fastSettings(), "env", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DECLARED=yes", "FROM_ENV=plain", "PATH=", "HOME="} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("server environment lacks %s:\n%s", want, res.Content)
		}
	}
	for _, secret := range []string{"sk-test", "ghp-test", "aws-test", "OPENAI_API_KEY", "MX_CLAW_SECRET_COMMAND", "SOME_SETTING="} {
		if strings.Contains(res.Content, secret) {
			t.Errorf("server environment holds %s:\n%s", secret, res.Content)
		}
	}
}

// TestProjectEntryMayNotReadKeys: ${OPENAI_API_KEY} in a project's entry
// is refused before anything starts; the user's own entry may read it.
func TestProjectEntryMayNotReadKeys(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("proj", map[string]string{"KEY": "${OPENAI_API_KEY}"})
	s.Source = SourceProject
	_, err := call(t, m, s, fastSettings(), "env", `{}`)
	if !errors.Is(err, ErrStartFailed) || !errors.Is(err, ErrVariable) || strings.Contains(err.Error(), "sk-test") {
		t.Fatalf("project entry reading a key: %v", err)
	}
	if running, _ := m.Running(t.TempDir(), s); running {
		t.Fatal("the server started")
	}
	s.Source = SourceUser
	res, err := call(t, m, s, fastSettings(), "env", `{}`)
	if err != nil || !strings.Contains(res.Content, "KEY=sk-test-openai-secret") {
		t.Fatalf("user entry: %v\n%s", err, res.Content)
	}
}

// TestHangingCall: a call the server does not answer in time fails; the
// server stays up for the next call.
func TestHangingCall(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("slow", nil)
	ws := t.TempDir()
	set := fastSettings()
	set.CallTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err := m.Call(context.Background(), ws, s, set, "sleep", json.RawMessage(`{"seconds":30}`))
	if !errors.Is(err, ErrCallTimeout) {
		t.Fatalf("sleep: %v, want ErrCallTimeout", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
	if res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"still"}`)); err != nil || res.Content != "echo: still" {
		t.Fatalf("after the timeout: %+v, %v", res, err)
	}
}

// TestHugeResult: text over MaxResultBytes is cut for the model; a message
// over MaxMessageBytes stops the server, and the next call starts it.
func TestHugeResult(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	s := helperServer("big", nil)
	ws := t.TempDir()
	set := fastSettings()
	set.MaxResultBytes = 4096
	set.MaxMessageBytes = 256 << 10
	res, err := m.Call(context.Background(), ws, s, set, "big", json.RawMessage(`{"bytes":100000}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 4096 || !strings.HasPrefix(res.Content, "BEGIN") || !strings.HasSuffix(res.Content, "END") || !strings.Contains(res.Content, "bytes omitted") {
		t.Fatalf("capped result: %d bytes, %.60q…", len(res.Content), res.Content)
	}
	_, err = m.Call(context.Background(), ws, s, set, "big", json.RawMessage(`{"bytes":1000000}`))
	if !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("1 MB result: %v, want ErrResultTooLarge", err)
	}
	if res, err := m.Call(context.Background(), ws, s, set, "echo", json.RawMessage(`{"message":"ok"}`)); err != nil || res.Content != "echo: ok" {
		t.Fatalf("after the huge result: %+v, %v", res, err)
	}
}

// TestStartFailures: a missing command and a server that exits at once
// fail to start with a clear reason.
func TestStartFailures(t *testing.T) {
	t.Parallel()
	m := newTestManager(t)
	missing := &Server{Name: "missing", Source: SourceUser, Transport: TransportStdio, Command: "no-such-mcp-server-command"}
	if _, err := call(t, m, missing, fastSettings(), "x", `{}`); !errors.Is(err, ErrStartFailed) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing command: %v", err)
	}
	exits := &Server{Name: "exits", Source: SourceUser, Transport: TransportStdio, Command: "sh", Args: []string{"-c", "echo bye >&2; exit 7"}}
	_, err := call(t, m, exits, fastSettings(), "x", `{}`)
	if !errors.Is(err, ErrStartFailed) || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("exiting server: %v", err)
	}
	silent := &Server{Name: "silent", Source: SourceUser, Transport: TransportStdio, Command: "sleep", Args: []string{"60"}}
	set := fastSettings()
	set.StartTimeout = 300 * time.Millisecond
	if _, err := call(t, m, silent, set, "x", `{}`); !errors.Is(err, ErrStartFailed) || !strings.Contains(err.Error(), "within") {
		t.Fatalf("silent server: %v", err)
	}
}

func TestHTTPServer(t *testing.T) {
	t.Parallel()
	ts := testHTTPServer(t, "Bearer ghp-test-token")
	m := newTestManager(t)
	s := &Server{Name: "web", Source: SourceUser, Transport: TransportHTTP, URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}}
	ws := t.TempDir()
	specs, _, err := m.List(context.Background(), ws, s, fastSettings())
	if err != nil || len(specs) != 6 {
		t.Fatalf("List: %d tools, %v", len(specs), err)
	}
	res, err := m.Call(context.Background(), ws, s, fastSettings(), "echo", json.RawMessage(`{"message":"over http"}`))
	if err != nil || res.Content != "echo: over http" {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	set := fastSettings()
	set.CallTimeout = 300 * time.Millisecond
	if _, err := m.Call(context.Background(), ws, s, set, "sleep", json.RawMessage(`{"seconds":3}`)); !errors.Is(err, ErrCallTimeout) {
		t.Fatalf("sleep: %v, want ErrCallTimeout", err)
	}
	// The message cap is the one the connection started with.
	capped := &Server{Name: "web-capped", Source: SourceUser, Transport: TransportHTTP, URL: ts.URL, Headers: s.Headers}
	set = fastSettings()
	set.MaxMessageBytes = 64 << 10
	if _, err := m.Call(context.Background(), ws, capped, set, "big", json.RawMessage(`{"bytes":200000}`)); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("big: %v, want ErrResultTooLarge", err)
	}
	if res, err := m.Call(context.Background(), ws, capped, set, "echo", json.RawMessage(`{"message":"again"}`)); err != nil || res.Content != "echo: again" {
		t.Fatalf("echo after the cap: %+v, %v", res, err)
	}
	// Without the header the server refuses the handshake.
	bad := &Server{Name: "web2", Source: SourceUser, Transport: TransportHTTP, URL: ts.URL}
	if _, err := m.Call(context.Background(), ws, bad, fastSettings(), "echo", json.RawMessage(`{}`)); !errors.Is(err, ErrStartFailed) {
		t.Fatalf("without auth: %v", err)
	}
}

// TestSSEServer: the older HTTP+SSE transport.
func TestSSEServer(t *testing.T) {
	t.Parallel()
	srv := newTestServer()
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	m := newTestManager(t)
	s := &Server{Name: "legacy", Source: SourceUser, Transport: TransportSSE, URL: ts.URL}
	res, err := call(t, m, s, fastSettings(), "echo", `{"message":"over sse"}`)
	if err != nil || res.Content != "echo: over sse" {
		t.Fatalf("echo: %+v, %v", res, err)
	}
}

// TestCloseStopsServers: Close leaves no server process behind.
func TestCloseStopsServers(t *testing.T) {
	t.Parallel()
	m := NewManager(Options{Home: t.TempDir(), Environ: testEnviron})
	s := helperServer("closing", nil)
	ws := t.TempDir()
	if _, err := m.Call(context.Background(), ws, s, fastSettings(), "echo", json.RawMessage(`{"message":"x"}`)); err != nil {
		t.Fatal(err)
	}
	_, pid := m.Running(ws, s)
	m.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("server %d still runs after Close", pid)
	}
	if _, err := m.Call(context.Background(), ws, s, fastSettings(), "echo", json.RawMessage(`{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
