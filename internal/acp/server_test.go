package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// agentConn is an in-process ACP agent on a fresh home with a scripted
// model, and a raw client connection to it.
type agentConn struct {
	t    *testing.T
	ws   string
	srv  *llmtest.Server
	conn *jsonrpc.Conn

	mu      sync.Mutex
	updates []sessionNotification
	asked   []requestPermissionParams
	choose  string // the option the client picks
}

func newAgent(t *testing.T, opts app.Options, requiresKey bool, replies ...llmtest.Reply) *agentConn {
	t.Helper()
	return newAgentConfig(t, opts, requiresKey, "", replies...)
}

// newAgentConfig is newAgent with more top-level keys of config.json
// (extra, without the braces).
func newAgentConfig(t *testing.T, opts app.Options, requiresKey bool, extra string, replies ...llmtest.Reply) *agentConn {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newAgentInConfig(t, t.TempDir(), ws, opts, requiresKey, extra, replies...)
}

// newAgentIn is newAgent on a given home and workspace: a second agent on
// the same home is another process's view of the same sessions.
func newAgentIn(t *testing.T, home, ws string, opts app.Options, requiresKey bool, replies ...llmtest.Reply) *agentConn {
	t.Helper()
	return newAgentInConfig(t, home, ws, opts, requiresKey, "", replies...)
}

// newAgentInConfig is newAgentIn with more top-level keys of config.json
// (extra, without the braces).
func newAgentInConfig(t *testing.T, home, ws string, opts app.Options, requiresKey bool, extra string, replies ...llmtest.Reply) *agentConn {
	t.Helper()
	srv := llmtest.NewTestServer(t, replies...)
	if extra != "" {
		extra = "," + extra
	}
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"apiKey":"","requiresApiKey":%v,"configured":true}}%s}`, srv.URL(), requiresKey, extra)
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), home, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ac := &agentConn{t: t, ws: ws, srv: srv, choose: "allow_once"}
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Serve(ctx, sr, sw, Options{Driver: app.NewDriver(a, ""), Version: "test"})
		sw.Close()
		close(done)
	}()
	ac.conn = jsonrpc.NewConn(cr, cw, ac.handle, jsonrpc.Options{})
	go ac.conn.Serve(ctx)
	t.Cleanup(func() { cw.Close(); <-done; cancel() })
	return ac
}

func (ac *agentConn) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	switch req.Method {
	case "session/update":
		var n sessionNotification
		req.Decode(&n)
		ac.updates = append(ac.updates, n)
		return nil, nil
	case "session/request_permission":
		var p requestPermissionParams
		if err := req.Decode(&p); err != nil {
			return nil, err
		}
		ac.asked = append(ac.asked, p)
		var res requestPermissionResult
		res.Outcome.Outcome, res.Outcome.OptionID = "selected", ac.choose
		return res, nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "%s", req.Method)
}

func (ac *agentConn) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return ac.conn.Call(ctx, method, params, result)
}

func (ac *agentConn) must(method string, params, result any) {
	ac.t.Helper()
	if err := ac.call(method, params, result); err != nil {
		ac.t.Fatalf("%s: %v", method, err)
	}
}

func (ac *agentConn) start() string {
	ac.t.Helper()
	ac.must("initialize", initializeParams{ProtocolVersion: 1}, nil)
	var s newSessionResult
	ac.must("session/new", newSessionParams{CWD: ac.ws}, &s)
	return s.SessionID
}

func (ac *agentConn) prompt(id, text string) (string, error) {
	var r promptResult
	err := ac.call("session/prompt", promptParams{SessionID: id, Prompt: []contentBlock{textBlock(text)}}, &r)
	return r.StopReason, err
}

func codeOf(t *testing.T, err error) int {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("not a JSON-RPC error: %v", err)
	}
	return e.Code
}

// TestStopReasons shows each way a turn ends as its stop reason.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  app.Options
		reply llmtest.Reply
		want  string
	}{
		{"end_turn", app.Options{}, llmtest.Text("hi"), "end_turn"},
		{"max_tokens", app.Options{}, llmtest.Reply{Text: "cut sho", FinishReason: "length"}, "max_tokens"},
		{"refusal", app.Options{}, llmtest.Reply{Text: "", FinishReason: "content_filter"}, "refusal"},
		{"max_turn_requests", app.Options{MaxIterations: 1}, llmtest.Call("list_dir", `{"path":"."}`), "max_turn_requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ac := newAgent(t, tt.opts, false, tt.reply)
			id := ac.start()
			got, err := ac.prompt(id, "go")
			if err != nil || got != tt.want {
				t.Fatalf("stop reason %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestRejectAlways shows reject-always answering later such calls of the
// session without asking the client again.
func TestRejectAlways(t *testing.T) {
	t.Parallel()
	ac := newAgent(t, app.Options{}, false,
		llmtest.Call("run_command", `{"command":"touch x"}`), llmtest.Text("ok"),
		llmtest.Call("run_command", `{"command":"touch x"}`), llmtest.Text("ok"))
	ac.choose = "reject_always"
	id := ac.start()
	for range 2 {
		if r, err := ac.prompt(id, "touch it"); err != nil || r != "end_turn" {
			t.Fatalf("prompt: %q %v", r, err)
		}
	}
	if len(ac.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(ac.asked))
	}
	kinds := []string{}
	for _, o := range ac.asked[0].Options {
		kinds = append(kinds, o.Kind)
	}
	if got := strings.Join(kinds, " "); got != "allow_once allow_always reject_once reject_always" {
		t.Fatalf("options: %s", got)
	}
	if _, err := os.Stat(filepath.Join(ac.ws, "x")); err == nil {
		t.Fatal("a rejected command ran")
	}
}

// TestProtocolErrors shows what a client gets for mistakes, and for a model
// that is not ready (authentication required).
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	ac := newAgent(t, app.Options{}, false)
	if c := codeOf(t, ac.call("session/new", newSessionParams{CWD: ac.ws}, nil)); c != jsonrpc.CodeInvalidRequest {
		t.Errorf("before initialize: %d", c)
	}
	id := ac.start()
	tests := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"relative cwd", "session/new", newSessionParams{CWD: "rel"}, jsonrpc.CodeInvalidParams},
		{"load unknown", "session/load", loadSessionParams{SessionID: "nope", CWD: ac.ws}, jsonrpc.CodeNotFound},
		{"prompt unknown", "session/prompt", promptParams{SessionID: "nope", Prompt: []contentBlock{textBlock("x")}}, jsonrpc.CodeNotFound},
		{"image prompt", "session/prompt", promptParams{SessionID: id, Prompt: []contentBlock{{Type: "image", Data: "x", MimeType: "image/png"}}}, jsonrpc.CodeInvalidParams},
		{"bad mode", "session/set_mode", setModeParams{SessionID: id, ModeID: "yolo"}, jsonrpc.CodeInvalidParams},
		{"bad auth method", "authenticate", authenticateParams{MethodID: "oauth"}, jsonrpc.CodeInvalidParams},
		{"unknown method", "session/fork", cancelParams{SessionID: id}, jsonrpc.CodeMethodNotFound},
	}
	for _, tt := range tests {
		if c := codeOf(t, ac.call(tt.method, tt.params, nil)); c != tt.code {
			t.Errorf("%s: code %d, want %d", tt.name, c, tt.code)
		}
	}
	ac.must("authenticate", authenticateParams{MethodID: authMethodModel}, nil)

	// A provider that needs a key nobody gave: authentication required.
	na := newAgent(t, app.Options{}, true)
	var init initializeResult
	na.must("initialize", initializeParams{ProtocolVersion: 1}, &init)
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].ID != authMethodModel {
		t.Fatalf("auth methods: %+v", init.AuthMethods)
	}
	err := na.call("session/new", newSessionParams{CWD: na.ws}, nil)
	if c := codeOf(t, err); c != jsonrpc.CodeAuthRequired || !strings.Contains(err.Error(), "mx-claw model") {
		t.Errorf("not ready: %v", err)
	}
	if c := codeOf(t, na.call("authenticate", authenticateParams{MethodID: authMethodModel}, nil)); c != jsonrpc.CodeAuthRequired {
		t.Errorf("authenticate while not ready: %d", c)
	}
}
