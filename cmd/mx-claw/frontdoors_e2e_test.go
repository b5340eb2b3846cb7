package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// rpcProc is an mx-claw stdio front door (acp, app-server) run as a
// subprocess and spoken to in raw JSON-RPC lines.
type rpcProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	cancel context.CancelFunc
	nextID int
	// answer answers the server's requests (approvals).
	answer func(method string, params json.RawMessage) any
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (e *env) startRPC(args ...string) *rpcProc {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := e.command(ctx, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	p := &rpcProc{t: e.t, cmd: cmd, in: in, out: sc, cancel: cancel}
	e.t.Cleanup(func() { p.close() })
	return p
}

// next reads the next message, answering the server's requests on the way.
func (p *rpcProc) next() rpcMsg {
	p.t.Helper()
	for p.out.Scan() {
		var m rpcMsg
		if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
			p.t.Fatalf("stdout carries a line that is not JSON-RPC: %q", p.out.Text())
		}
		if m.Method != "" && m.ID != nil {
			if p.answer == nil {
				p.t.Fatalf("unexpected request %s", m.Method)
			}
			p.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": p.answer(m.Method, m.Params)})
			continue
		}
		return m
	}
	p.t.Fatalf("the process ended its output: %v", p.out.Err())
	return rpcMsg{}
}

func (p *rpcProc) write(v any) {
	p.t.Helper()
	data, _ := json.Marshal(v)
	if _, err := p.in.Write(append(data, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// call sends a request and returns its result, handing the notifications
// that come first to note.
func (p *rpcProc) call(method string, params any, note func(rpcMsg)) json.RawMessage {
	p.t.Helper()
	p.nextID++
	id := p.nextID
	p.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for {
		m := p.next()
		if m.Method != "" {
			if note != nil {
				note(m)
			}
			continue
		}
		if string(m.ID) != fmt.Sprint(id) {
			p.t.Fatalf("answer to %s while waiting for %d", m.ID, id)
		}
		if m.Error != nil {
			p.t.Fatalf("%s: %d %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result
	}
}

func (p *rpcProc) close() {
	p.in.Close()
	p.cmd.Wait()
	p.cancel()
}

// approvalsLine is the system prompt's fact about approvals, which differs
// by front door: `run` has nobody to ask, the stdio front doors ask their
// client.
var approvalsLine = regexp.MustCompile(`- Approvals: [^\n]*`)

// turnOf is a transcript without what differs between runs: ids (tool call
// ids are numbered in order of appearance), turns, usage, sequence, and the
// approvals fact of the system prompt.
func turnOf(msgs []protocol.Message) []protocol.Message {
	ids := map[string]string{}
	id := func(s string) string {
		if s == "" {
			return ""
		}
		if _, ok := ids[s]; !ok {
			ids[s] = fmt.Sprintf("call#%d", len(ids)+1)
		}
		return ids[s]
	}
	out := make([]protocol.Message, len(msgs))
	for i, m := range msgs {
		if m.Role == protocol.RoleSystem {
			m.Content = approvalsLine.ReplaceAllString(m.Content, "- Approvals: (the front door's)")
		}
		n := protocol.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolName: m.ToolName,
			IsError: m.IsError, ToolCallID: id(m.ToolCallID), Model: m.Model}
		for _, tc := range m.ToolCalls {
			n.ToolCalls = append(n.ToolCalls, protocol.ToolCall{ID: id(tc.ID), Name: tc.Name, Arguments: tc.Arguments})
		}
		out[i] = n
	}
	return out
}

// TestSameTranscriptThroughEveryFrontDoor runs one scripted session
// through `run --json`, the app server and ACP, and finds the same
// transcript stored each time: the front doors translate, the core decides.
func TestSameTranscriptThroughEveryFrontDoor(t *testing.T) {
	t.Parallel()
	script := []llmtest.Reply{
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"hello","new_string":"bye"}`),
		llmtest.Text("Changed a.txt."),
	}
	var replies []llmtest.Reply
	for range 3 {
		replies = append(replies, script...)
	}
	e := newEnv(t, replies...)
	const prompt = "Change hello to bye in a.txt"
	sessions := map[string]string{}

	// 1. run --json.
	e.writeWS("a.txt", "hello world\n")
	r := e.run("", "run", "--json", "--permission-mode", "acceptEdits", prompt)
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	sessions["run --json"] = sessionOf(t, r.events(t))

	// 2. The app server.
	e.writeWS("a.txt", "hello world\n")
	as := e.startRPC("app-server", "--permission-mode", "acceptEdits")
	as.call("initialize", map[string]any{"clientInfo": map[string]string{"name": "test"}}, nil)
	var th struct {
		Thread struct{ ID string } `json:"thread"`
	}
	json.Unmarshal(as.call("thread/start", map[string]any{"cwd": e.ws}, nil), &th)
	var done bool
	waitDone := func(m rpcMsg) { done = done || m.Method == "turn/completed" }
	as.call("turn/start", map[string]any{"threadId": th.Thread.ID, "input": []map[string]string{{"type": "text", "text": prompt}}}, waitDone)
	for !done {
		if m := as.next(); m.Method == "turn/failed" || m.Method == "turn/interrupted" {
			t.Fatalf("app-server turn ended with %s: %s", m.Method, m.Params)
		} else {
			waitDone(m)
		}
	}
	as.close()
	sessions["app-server"] = th.Thread.ID

	// 3. ACP.
	e.writeWS("a.txt", "hello world\n")
	ap := e.startRPC("acp", "--permission-mode", "acceptEdits")
	ap.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
	var ns struct{ SessionID string }
	json.Unmarshal(ap.call("session/new", map[string]any{"cwd": e.ws, "mcpServers": []any{}}, nil), &ns)
	var pr struct{ StopReason string }
	json.Unmarshal(ap.call("session/prompt", map[string]any{"sessionId": ns.SessionID,
		"prompt": []map[string]string{{"type": "text", "text": prompt}}}, nil), &pr)
	if pr.StopReason != "end_turn" {
		t.Fatalf("acp stop reason %q", pr.StopReason)
	}
	ap.close()
	sessions["acp"] = ns.SessionID

	// Only the approvals fact differs, as it should.
	for door, fact := range map[string]string{"run --json": "- Approvals: none", "app-server": "- Approvals: interactive",
		"acp": "- Approvals: interactive"} {
		if msgs := e.show(sessions[door]).Messages; len(msgs) == 0 || !strings.Contains(msgs[0].Content, fact) {
			t.Errorf("%s: the system prompt should say %q", door, fact)
		}
	}
	want := turnOf(e.show(sessions["run --json"]).Messages)
	if len(want) < 6 || want[len(want)-1].Content != "Changed a.txt." {
		t.Fatalf("run --json transcript: %+v", want)
	}
	for _, door := range []string{"app-server", "acp"} {
		got := turnOf(e.show(sessions[door]).Messages)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s stored another transcript than run --json:\n%s\nwant:\n%s", door, g, w)
		}
	}
}
