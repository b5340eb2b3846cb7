package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/config"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// harness is an app server on a fresh home and workspace, with a scripted
// model, and a client connected to it.
type harness struct {
	t     *testing.T
	home  string
	ws    string
	srv   *llmtest.Server
	drv   *app.Driver
	a     *app.App
	event *jsonschema.Resolved // the schema.json's event schema
}

func newHarness(t *testing.T, replies ...llmtest.Reply) *harness {
	t.Helper()
	h := &harness{t: t, home: t.TempDir(), srv: llmtest.NewTestServer(t, replies...)}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h.ws = ws
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"apiKey":"","requiresApiKey":false,"configured":true}}}`, h.srv.URL())
	if err := os.WriteFile(filepath.Join(h.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(h.home)
	if err != nil {
		t.Fatal(err)
	}
	h.a, err = app.Open(context.Background(), h.home, c, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.a.Close() })
	h.drv = app.NewDriver(h.a, "")
	h.event = eventSchema(t)
	return h
}

// eventSchema resolves the event schema of the checked-in schema.json.
func eventSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]*jsonschema.Schema `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := &jsonschema.Schema{Ref: "#/$defs/Event", Defs: doc.Defs}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// client is a program talking to the app server.
type client struct {
	h    *harness
	conn *jsonrpc.Conn
	stop func()
	// decide answers approval requests.
	decide func(ApprovalParams) string

	mu        sync.Mutex
	notes     []note
	approvals []ApprovalParams
	changed   chan struct{}
}

type note struct {
	method string
	event  protocol.Event
}

// connect starts a server connection and a client on it.
func (h *harness) connect() *client {
	h.t.Helper()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	c := &client{h: h, changed: make(chan struct{}, 1), decide: func(ApprovalParams) string { return "accept" }}
	c.conn = jsonrpc.NewConn(cr, cw, c.handle, jsonrpc.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, sr, sw, Options{Driver: h.drv, Version: "test"}); sw.Close() }()
	go c.conn.Serve(ctx)
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			cw.Close()
			if err := <-served; err != nil {
				h.t.Errorf("serve: %v", err)
			}
			cancel()
		})
	}
	h.t.Cleanup(c.stop)
	var res InitializeResult
	c.call("initialize", InitializeParams{ClientInfo: &ClientInfo{Name: "test"}}, &res)
	if res.ProtocolVersion != ProtocolVersion || len(res.PermissionModes) != 4 {
		h.t.Fatalf("initialize: %+v", res)
	}
	return c
}

func (c *client) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.IsNotification() {
		var e protocol.Event
		if err := req.Decode(&e); err != nil {
			c.h.t.Errorf("notification %s: %v", req.Method, err)
		}
		var raw map[string]any
		json.Unmarshal(req.Params, &raw)
		if err := c.h.event.Validate(raw); err != nil {
			c.h.t.Errorf("notification %s does not match schema.json: %v\n%s", req.Method, err, req.Params)
		}
		if want := methodOf(e.Type); req.Method != want {
			c.h.t.Errorf("event %s came as %s, want %s", e.Type, req.Method, want)
		}
		c.mu.Lock()
		c.notes = append(c.notes, note{req.Method, e})
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
		return nil, nil
	}
	if req.Method != requestApproval {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "unexpected %s", req.Method)
	}
	var p ApprovalParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.approvals = append(c.approvals, p)
	c.mu.Unlock()
	return ApprovalResult{Decision: c.decide(p)}, nil
}

func (c *client) call(method string, params, result any) {
	c.h.t.Helper()
	if err := c.try(method, params, result); err != nil {
		c.h.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) try(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

// waitFor waits until a notification of the method has come and returns
// all notifications so far.
func (c *client) waitFor(method string) []note {
	c.h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		notes := append([]note(nil), c.notes...)
		c.mu.Unlock()
		for _, n := range notes {
			if n.method == method {
				return notes
			}
		}
		select {
		case <-c.changed:
		case <-deadline:
			c.h.t.Fatalf("no %s notification; got %v", method, methodsOf(notes))
		}
	}
}

func methodsOf(notes []note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.method
	}
	return out
}

// TestTurnWithApproval starts a thread and a turn whose edit needs
// approval: the server asks, the client accepts, the turn goes on, and
// every event arrives as its notification, in order, matching the schema.
func TestTurnWithApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		llmtest.Call("write_file", `{"path":"hello.txt","content":"hi\n"}`),
		llmtest.Text("Wrote it."))
	c := h.connect()
	var th ThreadResult
	c.call("thread/start", ThreadStartParams{Cwd: h.ws}, &th)
	if th.Thread.ID == "" || th.Thread.Cwd != h.ws || th.Thread.PermissionMode != "default" {
		t.Fatalf("thread: %+v", th.Thread)
	}
	var ts TurnStartResult
	c.call("turn/start", TurnStartParams{ThreadID: th.Thread.ID, Input: []InputItem{{Type: "text", Text: "write hello.txt"}}}, &ts)
	if ts.Turn.ID == "" || ts.Turn.Status != "inProgress" {
		t.Fatalf("turn: %+v", ts)
	}
	notes := c.waitFor("turn/completed")
	got := strings.Join(methodsOf(notes), " ")
	for _, want := range []string{"thread/started", "turn/started", "item/tool/approvalRequested", "item/tool/approvalResolved",
		"item/tool/started", "item/tool/completed", "item/agentMessage/delta", "item/message/completed", "turn/completed"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s among %s", want, got)
		}
	}
	if strings.Index(got, "item/tool/approvalRequested") > strings.Index(got, "item/tool/started") {
		t.Errorf("the approval came after the call started: %s", got)
	}
	if len(c.approvals) != 1 || c.approvals[0].ToolName != "write_file" || c.approvals[0].TurnID != ts.Turn.ID {
		t.Fatalf("approvals: %+v", c.approvals)
	}
	if data, err := os.ReadFile(filepath.Join(h.ws, "hello.txt")); err != nil || string(data) != "hi\n" {
		t.Fatalf("hello.txt: %q %v", data, err)
	}
	var read ThreadReadResult
	c.call("thread/read", ThreadReadParams{ThreadID: th.Thread.ID, IncludeMessages: true, IncludeEvents: true}, &read)
	if read.Thread.Status != protocol.StatusIdle || len(read.Messages) == 0 || len(read.Events) == 0 {
		t.Fatalf("read: %+v", read.Thread)
	}
	if last := read.Messages[len(read.Messages)-1]; last.Content != "Wrote it." {
		t.Fatalf("last message: %+v", last)
	}
	var list ThreadListResult
	c.call("thread/list", ThreadListParams{Cwd: h.ws}, &list)
	if len(list.Data) != 1 || list.Data[0].ID != th.Thread.ID || list.Data[0].Title != "write hello.txt" {
		t.Fatalf("list: %+v", list)
	}
}

// TestDeclineForSession shows a decline "for the session" answering the
// next such call without asking.
func TestDeclineForSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		llmtest.Call("run_command", `{"command":"touch a"}`),
		llmtest.Text("ok"),
		llmtest.Call("run_command", `{"command":"touch a"}`),
		llmtest.Text("ok again"))
	c := h.connect()
	c.decide = func(ApprovalParams) string { return "declineForSession" }
	var th ThreadResult
	c.call("thread/start", ThreadStartParams{Cwd: h.ws}, &th)
	for i := range 2 {
		var ts TurnStartResult
		c.call("turn/start", TurnStartParams{ThreadID: th.Thread.ID, Input: []InputItem{{Type: "text", Text: fmt.Sprint("go ", i)}}}, &ts)
		deadline := time.Now().Add(20 * time.Second)
		for {
			var read ThreadReadResult
			c.call("thread/read", ThreadReadParams{ThreadID: th.Thread.ID}, &read)
			if read.Thread.Status == protocol.StatusIdle && read.Thread.MessageCount > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("turn did not end")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if len(c.approvals) != 1 {
		t.Fatalf("asked %d times, want once", len(c.approvals))
	}
	reqs := h.srv.Requests()
	for _, i := range []int{1, 3} {
		var result string
		for _, m := range reqs[i].Chat.Messages {
			if m.Role == "tool" {
				result = m.Content
			}
		}
		if !strings.Contains(result, "User rejected this tool call") {
			t.Fatalf("request %d: tool result %q", i, result)
		}
	}
}

// TestInterruptAndResume interrupts a streaming turn, then a second
// connection resumes the thread and gets every stored event replayed.
func TestInterruptAndResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, llmtest.Reply{Text: "never ending", Hang: true})
	c := h.connect()
	var th ThreadResult
	c.call("thread/start", ThreadStartParams{Cwd: h.ws, PermissionMode: "plan"}, &th)
	if th.Thread.PermissionMode != "plan" {
		t.Fatalf("mode: %+v", th.Thread)
	}
	var ts TurnStartResult
	c.call("turn/start", TurnStartParams{ThreadID: th.Thread.ID, Input: []InputItem{{Type: "text", Text: "talk"}}}, &ts)
	c.waitFor("item/agentMessage/delta")
	c.call("turn/interrupt", TurnInterruptParams{ThreadID: th.Thread.ID, TurnID: ts.Turn.ID}, nil)
	c.waitFor("turn/interrupted")
	c.stop()

	c2 := h.connect()
	after := int64(0)
	var res ThreadResult
	c2.call("thread/resume", ThreadResumeParams{ThreadID: th.Thread.ID, AfterSequence: &after}, &res)
	if res.Thread.Status != protocol.StatusCancelled {
		t.Fatalf("resumed thread: %+v", res.Thread)
	}
	stored, err := h.drv.Events(context.Background(), th.Thread.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	c2.mu.Lock()
	replayed := append([]note(nil), c2.notes...)
	c2.mu.Unlock()
	if len(replayed) != len(stored) {
		t.Fatalf("replayed %d events, stored %d: %v", len(replayed), len(stored), methodsOf(replayed))
	}
	for i := range stored {
		if replayed[i].event.Sequence != stored[i].Sequence || replayed[i].event.Type != stored[i].Type {
			t.Fatalf("event %d: replayed %+v, stored %+v", i, replayed[i].event, stored[i])
		}
	}
	if replayed[0].method != "thread/started" || replayed[len(replayed)-1].method != "turn/interrupted" {
		t.Fatalf("replay: %v", methodsOf(replayed))
	}
}

// TestBadRequests shows the errors a client gets for mistakes.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.connect()
	code := func(err error) int {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			t.Fatalf("not a JSON-RPC error: %v", err)
		}
		return e.Code
	}
	tests := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"unknown thread", "thread/read", ThreadReadParams{ThreadID: "nope"}, jsonrpc.CodeNotFound},
		{"relative cwd", "thread/start", ThreadStartParams{Cwd: "rel"}, jsonrpc.CodeInvalidParams},
		{"bad mode", "thread/start", ThreadStartParams{Cwd: h.ws, PermissionMode: "yolo"}, jsonrpc.CodeInvalidParams},
		{"turn on unknown thread", "turn/start", TurnStartParams{ThreadID: "nope", Input: []InputItem{{Type: "text", Text: "x"}}}, jsonrpc.CodeNotFound},
		{"interrupt idle", "turn/interrupt", TurnInterruptParams{ThreadID: "nope"}, jsonrpc.CodeInvalidRequest},
		{"again initialize", "initialize", InitializeParams{}, jsonrpc.CodeInvalidRequest},
		{"unknown method", "thread/archive", Empty{}, jsonrpc.CodeMethodNotFound},
		{"params not an object", "thread/list", "x", jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		if got := code(c.try(tt.method, tt.params, nil)); got != tt.code {
			t.Errorf("%s: code %d, want %d", tt.name, got, tt.code)
		}
	}
	var th ThreadResult
	c.call("thread/start", ThreadStartParams{Cwd: h.ws}, &th)
	if got := code(c.try("turn/start", TurnStartParams{ThreadID: th.Thread.ID, Input: []InputItem{{Type: "image", Text: "x"}}}, nil)); got != jsonrpc.CodeInvalidParams {
		t.Errorf("image input: code %d", got)
	}
}

// TestEveryEventTypeHasAMethod keeps the mapping complete: an event type
// added to protocol without a method would go out as thread/event.
func TestEveryEventTypeHasAMethod(t *testing.T) {
	t.Parallel()
	seen := map[string]protocol.EventType{}
	for typ, m := range methods {
		if prev, dup := seen[m]; dup {
			t.Errorf("%s and %s share method %s", prev, typ, m)
		}
		seen[m] = typ
	}
	if len(methods) != 22 {
		t.Errorf("methods maps %d event types; protocol has 22 — update events.go and schema.json together", len(methods))
	}
}
