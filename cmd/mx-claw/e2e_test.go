package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/cli"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// binPath is the mx-claw binary the tests run: this test binary, linked
// (or copied) as "mx-claw" into a temporary directory.
var binPath string

// TestMain runs the tests, or, when this binary was started as "mx-claw",
// the command itself (as main.go does): the tests drive the very code
// they were built with, and `go test` builds it once instead of a second
// time with `go build` (on a fresh checkout that second build compiled
// every package again, about a minute on the project's machine). The
// sandbox helper, MCP servers and hooks that mx-claw starts from its own
// executable find "mx-claw" too.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "mx-claw" {
		os.Exit(runMXClaw())
	}
	dir, err := os.MkdirTemp("", "mx-claw-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "mx-claw")
	if err := linkSelf(binPath); err != nil {
		fmt.Fprintf(os.Stderr, "make the mx-claw binary: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runMXClaw is main.go's main.
func runMXClaw() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return cli.Main(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// linkSelf makes path this executable: a hard link, or a copy where
// links cannot be made (another file system).
func linkSelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if os.Link(self, path) == nil {
		return nil
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// env is one end-to-end setting: a home, a workspace and a fake model.
type env struct {
	t    *testing.T
	home string
	ws   string
	srv  *llmtest.Server
}

func newEnv(t *testing.T, replies ...llmtest.Reply) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), ws: t.TempDir(), srv: llmtest.NewServer(replies...)}
	t.Cleanup(e.srv.Close)
	ws, err := filepath.EvalSymlinks(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	// Skill proposals are off unless a test turns them on: after a turn
	// with several tool calls they add a model request, which would take
	// a reply scripted for the next turn.
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","skills":{"proposals":false},"providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model","other-model"],"apiKey":"","requiresApiKey":false,"configured":true}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	return e
}

func (e *env) writeHome(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.home, name), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) writeWS(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = e.ws
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"MX_CLAW_HOME=" + e.home,
		"LANG=C.UTF-8",
	}
	return cmd
}

// result is what a finished mx-claw process left.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) events(t *testing.T) []protocol.Event {
	t.Helper()
	var evs []protocol.Event
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev protocol.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not an event: %v\n%s", err, sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// run runs mx-claw to completion with stdin, failing the test after a minute.
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run mx-claw %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// show returns the stored session as `sessions show --json` prints it.
func (e *env) show(id string) sessionDump {
	e.t.Helper()
	r := e.run("", "sessions", "show", id, "--json")
	if r.code != 0 {
		e.t.Fatalf("sessions show %s: exit %d: %s", id, r.code, r.stderr)
	}
	var d sessionDump
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("sessions show --json: %v\n%s", err, r.stdout)
	}
	return d
}

type sessionDump struct {
	Session  protocol.Session   `json:"session"`
	Messages []protocol.Message `json:"messages"`
}

func sessionOf(t *testing.T, evs []protocol.Event) string {
	t.Helper()
	for _, ev := range evs {
		if ev.SessionID != "" {
			return ev.SessionID
		}
	}
	t.Fatal("no event names a session")
	return ""
}

func types(evs []protocol.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		if ev.Type == protocol.EventToolStarted || ev.Type == protocol.EventToolCompleted {
			out = append(out, string(ev.Type)+":"+ev.ToolCallID)
		}
	}
	return out
}

func toolResults(req llmtest.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Chat.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func TestVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mx-claw ") {
		t.Fatalf("version: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestRunReadWriteAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "write_file", Arguments: `{"path":"out/summary.md","content":"# Summary\nhello from mx-claw\n"}`}}},
		llmtest.Text("I read notes.txt and wrote out/summary.md."),
	)
	e.writeWS("notes.txt", "first line\nsecond line\n")
	r := e.run("", "run", "--permission-mode", "acceptEdits", "summarise notes.txt")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "I read notes.txt and wrote out/summary.md.") {
		t.Errorf("stdout lacks the answer: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "notes.txt") {
		t.Errorf("stderr lacks the tool progress: %q", r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(e.ws, "out/summary.md"))
	if err != nil || string(got) != "# Summary\nhello from mx-claw\n" {
		t.Fatalf("out/summary.md = %q, %v", got, err)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests, want 3", len(reqs))
	}
	first := reqs[0].Chat
	if first.Messages[0].Role != "system" || first.Messages[len(first.Messages)-1].Content != "summarise notes.txt" {
		t.Errorf("first request messages: %+v", first.Messages)
	}
	if want := []string{"read_file", "list_dir", "glob", "grep", "write_file", "edit_file", "apply_patch", "todo_write", "run_command", "read_tool_output", "search_history", "process_output", "process_kill", "web_fetch", "merge_worktree", "diagnostics", "task"}; strings.Join(first.Tools, ",") != strings.Join(want, ",") {
		t.Errorf("tools offered %v, want %v", first.Tools, want)
	}
	if res := toolResults(reqs[1])["c1"]; !strings.Contains(res, "second line") {
		t.Errorf("read result sent to the model: %q", res)
	}
	if res := toolResults(reqs[2])["c2"]; !strings.Contains(res, "out/summary.md") {
		t.Errorf("write result sent to the model: %q", res)
	}
	t.Logf("first request: %d bytes", reqs[0].Size)
	// The instructions with the environment (about 5 KB, issue 22) and
	// the schemas of 17 tools (about 16 KB: the web, background-process,
	// subagent, worktree and diagnostics tools of issues 14 and 21
	// included). A new tool that pushes this past the cap should trim
	// descriptions first.
	if reqs[0].Size > 24<<10 {
		t.Errorf("first request is %d bytes, want under 24 KB", reqs[0].Size)
	}
}

func TestRunJSONEventsAndSessionShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_dir", Arguments: `{}`}}},
		llmtest.Reply{Reasoning: "thinking it over", Text: "All good."},
	)
	e.writeWS("a.go", "package a\n")
	r := e.run("", "run", "--json", "look around")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := r.events(t)
	var last int64
	seen := map[protocol.EventType]bool{}
	for _, ev := range evs {
		seen[ev.Type] = true
		if ev.Timestamp.IsZero() || ev.SessionID == "" {
			t.Errorf("event without timestamp or session: %+v", ev)
		}
		if !ev.Type.Stored() {
			continue
		}
		if ev.Sequence <= last {
			t.Errorf("sequence %d after %d (%s)", ev.Sequence, last, ev.Type)
		}
		last = ev.Sequence
	}
	for _, want := range []protocol.EventType{protocol.EventSessionCreated, protocol.EventTurnStarted, protocol.EventMessageDelta,
		protocol.EventReasoningDelta, protocol.EventToolStarted, protocol.EventToolCompleted, protocol.EventUsage,
		protocol.EventMessageCompleted, protocol.EventTurnCompleted, protocol.EventSessionUpdated} {
		if !seen[want] {
			t.Errorf("no %s event", want)
		}
	}
	if evs[len(evs)-1].Type != protocol.EventTurnCompleted {
		t.Errorf("last event %s, want turn.completed", evs[len(evs)-1].Type)
	}
	id := sessionOf(t, evs)
	d := e.show(id)
	if d.Session.Status != protocol.StatusIdle {
		t.Errorf("status %s, want idle", d.Session.Status)
	}
	roles := []string{}
	for _, m := range d.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,assistant" {
		t.Errorf("stored roles %s", got)
	}
	if last := d.Messages[len(d.Messages)-1]; last.Reasoning != "thinking it over" || last.Content != "All good." || last.Model != "fake/fake-model" {
		t.Errorf("final message %+v", last)
	}
	list := e.run("", "sessions", "list")
	if list.code != 0 || !strings.Contains(list.stdout, id) {
		t.Errorf("sessions list: exit %d, %q", list.code, list.stdout)
	}
}

func TestRunParallelReadsSerialWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "r1", Name: "read_file", Arguments: `{"path":"a.txt"}`},
			{ID: "r2", Name: "read_file", Arguments: `{"path":"b.txt"}`},
			{ID: "r3", Name: "list_dir", Arguments: `{"path":"."}`},
		}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "w1", Name: "write_file", Arguments: `{"path":"x.txt","content":"x"}`},
			{ID: "w2", Name: "read_file", Arguments: `{"path":"x.txt"}`},
		}},
		llmtest.Text("done"),
	)
	e.writeWS("a.txt", "A\n")
	e.writeWS("b.txt", "B\n")
	r := e.run("", "run", "--json", "--permission-mode", "acceptEdits", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := strings.Join(types(r.events(t)), " ")
	// The read-only batch starts every call before any completes; the
	// batch with a write runs one call after the other, in order.
	wantPrefix := "tool.started:r1 tool.started:r2 tool.started:r3 "
	wantSuffix := "tool.started:w1 tool.completed:w1 tool.started:w2 tool.completed:w2"
	if !strings.HasPrefix(got, wantPrefix) || !strings.HasSuffix(got, wantSuffix) {
		t.Errorf("tool events:\n%s\nwant prefix %q and suffix %q", got, wantPrefix, wantSuffix)
	}
	reqs := e.srv.ChatRequests()
	// The results reach the model in call order.
	var order []string
	for _, m := range reqs[1].Chat.Messages {
		if m.Role == "tool" {
			order = append(order, m.ToolCallID)
		}
	}
	if strings.Join(order, ",") != "r1,r2,r3" {
		t.Errorf("tool results order %v", order)
	}
	if res := toolResults(reqs[2])["w2"]; !strings.Contains(res, "x") {
		t.Errorf("the read after the write saw %q", res)
	}
}

func TestRunIterationCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := 0
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		n++
		return llmtest.Call("read_file", fmt.Sprintf(`{"path":"f.txt","offset":%d}`, n))
	})
	e.writeWS("f.txt", strings.Repeat("line\n", 10))
	r := e.run("", "run", "--max-iterations", "3", "loop forever")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Maximum agent iterations reached (3)") {
		t.Errorf("stderr %q lacks the explicit message", r.stderr)
	}
	if got := len(e.srv.ChatRequests()); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestRunDuplicateCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{ "path": "a.txt" }`}}},
		llmtest.Text("ok"),
	)
	e.writeWS("a.txt", "A\n")
	r := e.run("", "run", "read a twice")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[2])
	if res["c2"] != "Duplicate tool call rejected; use the previous result instead." {
		t.Errorf("second identical call got %q", res["c2"])
	}
}

func TestRunToolErrorsBecomeResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "u", Name: "no_such_tool", Arguments: `{}`},
			{ID: "j", Name: "read_file", Arguments: `{"path":`},
			{ID: "s", Name: "read_file", Arguments: `{"path":5}`},
			{ID: "o", Name: "read_file", Arguments: `{"path":"../outside.txt"}`},
			{ID: "m", Name: "read_file", Arguments: `{"path":"missing.txt"}`},
		}},
		llmtest.Text("ok"),
	)
	r := e.run("", "run", "break things")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	for id, want := range map[string]string{
		"u": `Tool failed: unknown tool "no_such_tool"`,
		"j": "Tool failed: invalid JSON",
		"s": "Tool failed: invalid arguments",
		"o": "Tool failed:",
		"m": "Tool failed:",
	} {
		if !strings.HasPrefix(res[id], want) {
			t.Errorf("result of %s = %q, want prefix %q", id, res[id], want)
		}
	}
	if !strings.Contains(res["o"], "outside") {
		t.Errorf("outside path result %q does not say why", res["o"])
	}
}

func TestRunRetryAfter429(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Status: 429, RetryAfter: "1"}, llmtest.Text("after the retry"))
	r := e.run("", "run", "--json", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var retry *protocol.Event
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventRetry {
			retry = &ev
		}
	}
	if retry == nil || retry.DelayMS < 1000 || retry.DelayMS > 5000 {
		t.Errorf("retry event %+v, want a delay honouring Retry-After: 1", retry)
	}
	if n := len(e.srv.ChatRequests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestRunStreamCutThenNextTurnWorks(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"never.txt","content":"should not be written"}`}}, CutMidArguments: true},
		llmtest.Text("second turn works"),
	)
	r := e.run("", "run", "--json", "first")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	d := e.show(id)
	if d.Session.Status != protocol.StatusFailed || d.Session.LastError == "" {
		t.Errorf("after a cut stream: status %s, error %q", d.Session.Status, d.Session.LastError)
	}
	for _, m := range d.Messages {
		if m.Role == protocol.RoleAssistant {
			t.Errorf("a partial assistant message was stored: %+v", m)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "never.txt")); err == nil {
		t.Error("the cut call ran")
	}
	r2 := e.run("", "run", "--continue", "again")
	if r2.code != 0 || !strings.Contains(r2.stdout, "second turn works") {
		t.Fatalf("next turn: exit %d, %q %q", r2.code, r2.stdout, r2.stderr)
	}
	if d := e.show(id); d.Session.Status != protocol.StatusIdle {
		t.Errorf("status after the next turn %s", d.Session.Status)
	}
}

// startJSON starts mx-claw run --json and returns a channel of its events.
func (e *env) startJSON(ctx context.Context, args ...string) (*exec.Cmd, <-chan protocol.Event, *bytes.Buffer) {
	e.t.Helper()
	cmd := e.command(ctx, append([]string{"run", "--json"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ch := make(chan protocol.Event, 64)
	go func() {
		defer close(ch)
		dec := json.NewDecoder(stdout)
		for {
			var ev protocol.Event
			if err := dec.Decode(&ev); err != nil {
				io.Copy(io.Discard, stdout)
				return
			}
			ch <- ev
		}
	}()
	return cmd, ch, &errb
}

// waitFor reads events until one of type typ arrives.
func waitFor(t *testing.T, ch <-chan protocol.Event, typ protocol.EventType) protocol.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event in 30 s", typ)
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestRunSIGINTCancels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "this answer never ends", Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, ch, errb := e.startJSON(ctx, "hang please")
	ev := waitFor(t, ch, protocol.EventMessageDelta)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	if code := exitCode(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, errb)
	}
	d := e.show(ev.SessionID)
	if d.Session.Status != protocol.StatusCancelled {
		t.Errorf("status %s, want cancelled", d.Session.Status)
	}
}

func TestRunSecondProcessFailsFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "slow", Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, ch, _ := e.startJSON(ctx, "first process")
	ev := waitFor(t, ch, protocol.EventMessageDelta)
	start := time.Now()
	r := e.run("", "run", "--session", ev.SessionID, "second process")
	if r.code != 1 {
		t.Errorf("second process: exit %d, want 1\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "busy") || !strings.Contains(r.stderr, fmt.Sprintf(":%d:", cmd.Process.Pid)) {
		t.Errorf("second process error %q does not name the holder (pid %d)", r.stderr, cmd.Process.Pid)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("second process took %v to fail", d)
	}
	cmd.Process.Signal(os.Interrupt)
	for range ch {
	}
	cmd.Wait()
	if n := len(e.srv.ChatRequests()); n != 1 {
		t.Errorf("%d model requests, want only the first process's", n)
	}
}

func TestRunBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env)
		stdin string
		args  []string
		want  string
	}{
		{"unknown model", nil, "", []string{"run", "--model", "fake/nope", "hi"}, `unknown model "nope"`},
		{"unknown provider", nil, "", []string{"run", "--model", "nope/x", "hi"}, `unknown provider "nope"`},
		{"missing config", func(e *env) { os.Remove(filepath.Join(e.home, "config.json")) }, "", []string{"run", "hi"}, "mx-claw model configure"},
		{"corrupt config", func(e *env) { e.writeHome("config.json", `{"version":1,"providers":`) }, "", []string{"run", "hi"}, "config.json is not valid JSON"},
		{"empty prompt argument", nil, "", []string{"run", "  "}, "prompt is empty"},
		{"empty prompt on stdin", nil, "\n\n", []string{"run"}, "prompt is empty"},
		{"unknown session", nil, "", []string{"run", "--session", "does-not-exist", "hi"}, "session does-not-exist does not exist"},
		{"session and continue", nil, "", []string{"run", "--session", "x", "--continue", "hi"}, "cannot be used together"},
		{"bad flag", nil, "", []string{"run", "--no-such-flag", "hi"}, "unknown flag"},
		{"bad max iterations", nil, "", []string{"run", "--max-iterations", "-1", "hi"}, "must be positive"},
		{"missing cwd", nil, "", []string{"run", "--cwd", "/does/not/exist", "hi"}, "does not exist"},
		{"show unknown session", nil, "", []string{"sessions", "show", "nope"}, "session nope does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			before, _ := os.ReadFile(filepath.Join(e.home, "config.json"))
			r := e.run(tt.stdin, tt.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.want) {
				t.Errorf("stderr %q lacks %q", r.stderr, tt.want)
			}
			after, _ := os.ReadFile(filepath.Join(e.home, "config.json"))
			if !bytes.Equal(before, after) {
				t.Errorf("config changed from %q to %q", before, after)
			}
			if n := len(e.srv.ChatRequests()); n != 0 {
				t.Errorf("%d model requests for bad input", n)
			}
		})
	}
}

func TestRunPromptFromStdinAndContinue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"))
	r := e.run("what is in this repo?\n", "run", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	r2 := e.run("", "run", "--continue", "--json", "and then?")
	if r2.code != 0 {
		t.Fatalf("exit %d: %s", r2.code, r2.stderr)
	}
	if id2 := sessionOf(t, r2.events(t)); id2 != id {
		t.Errorf("--continue used session %s, want %s", id2, id)
	}
	reqs := e.srv.ChatRequests()
	msgs := reqs[1].Chat.Messages
	var contents []string
	for _, m := range msgs {
		contents = append(contents, m.Role+":"+m.Content)
	}
	if got := strings.Join(contents[1:], "|"); got != "user:what is in this repo?\n|assistant:one|user:and then?" {
		t.Errorf("second turn sent %q", got)
	}
	// The system prompt is frozen: the same text both times.
	if reqs[0].Chat.Messages[0].Content != msgs[0].Content {
		t.Error("system prompt changed between turns")
	}
}

func TestRunDefaultModeFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "ls", Name: "run_command", Arguments: `{"command":"ls -la && git status || true"}`},
			{ID: "touch", Name: "run_command", Arguments: `{"command":"touch made-by-model"}`},
			{ID: "w", Name: "write_file", Arguments: `{"path":"new.txt","content":"x"}`},
			{ID: "rm", Name: "run_command", Arguments: `{"command":"rm -rf ~"}`},
		}},
		llmtest.Text("ok"),
	)
	r := e.run("", "run", "try things")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.Contains(res["ls"], "exit code") {
		t.Errorf("a read-only command was not run: %q", res["ls"])
	}
	for _, id := range []string{"touch", "w"} {
		if !strings.Contains(res[id], "needs the user's approval") || !strings.Contains(res[id], "nobody can approve it") {
			t.Errorf("result of %s = %q, want a fail-closed denial the model can read", id, res[id])
		}
	}
	if !strings.Contains(res["touch"], "run_command(touch made-by-model)") {
		t.Errorf("the denial does not name the rule that would allow it: %q", res["touch"])
	}
	if !strings.Contains(res["rm"], "permission denied") || !strings.Contains(res["rm"], "catastrophic") {
		t.Errorf("rm -rf ~ result %q", res["rm"])
	}
	for _, f := range []string{"made-by-model", "new.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err == nil {
			t.Errorf("%s was created without approval", f)
		}
	}
	audit := e.run("", "permissions", "audit", "--json")
	var entries []protocol.AuditEntry
	if err := json.Unmarshal([]byte(audit.stdout), &entries); err != nil || len(entries) != 4 {
		t.Fatalf("audit: %v, %d entries: %s", err, len(entries), audit.stdout)
	}
	if entries[0].Decision != "allow" || entries[1].Decision != "ask" || entries[3].Decision != "deny" {
		t.Errorf("audit decisions %+v", entries)
	}
}

func TestRunBypassStillDeniesCatastrophic(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "touch", Name: "run_command", Arguments: `{"command":"touch made-by-model"}`},
			{ID: "rm", Name: "run_command", Arguments: `{"command":"true && FOO=1 /bin/rm -rf /"}`},
		}},
		llmtest.Text("ok"),
	)
	if r := e.run("", "run", "--yolo", "go"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.Contains(res["touch"], "exit code 0") {
		t.Errorf("bypass did not run touch: %q", res["touch"])
	}
	if !strings.Contains(res["rm"], "permission denied") {
		t.Errorf("bypass ran a catastrophic command: %q", res["rm"])
	}
}

func TestRunCommandGetsNoSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("run_command", `{"command":"env"}`), llmtest.Text("ok"))
	cmd := e.command(context.Background(), "run", "--yolo", "show env")
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-test-secret-1", "MX_CLAW_API_KEY_FAKE=sk-test-secret-2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, m := range e.srv.ChatRequests()[1].Chat.Messages {
		if strings.Contains(m.Content, "sk-test-secret") {
			t.Errorf("a key reached the command's environment: %q", m.Content)
		}
	}
}

func TestRunSIGKILLMidToolThenContinue(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "w1", Name: "write_file", Arguments: `{"path":"kept.txt","content":"stored before the kill"}`},
			{ID: "s1", Name: "run_command", Arguments: `{"command":"sleep 60"}`},
		}},
		llmtest.Text("recovered"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, ch, _ := e.startJSON(ctx, "--yolo", "sleep a while")
	var started protocol.Event
	for started.ToolCallID != "s1" {
		started = waitFor(t, ch, protocol.EventToolStarted)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for range ch {
	}
	cmd.Wait()

	r := e.run("", "run", "--yolo", "--continue", "--json", "are you there?")
	if r.code != 0 {
		t.Fatalf("continue after SIGKILL: exit %d: %s", r.code, r.stderr)
	}
	if id := sessionOf(t, r.events(t)); id != started.SessionID {
		t.Errorf("--continue used session %s, want %s", id, started.SessionID)
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	res := toolResults(last)
	if !strings.Contains(res["w1"], "kept.txt") {
		t.Errorf("the stored result of the call before the kill is missing: %q", res["w1"])
	}
	if res["s1"] != "Tool execution was interrupted before a result was recorded. This call must be retried if still needed." {
		t.Errorf("interrupted call's result %q", res["s1"])
	}
	// Order: ... assistant(w1,s1), tool w1, tool s1, user.
	msgs := last.Chat.Messages
	if n := len(msgs); n < 4 || msgs[n-1].Content != "are you there?" || msgs[n-2].ToolCallID != "s1" || msgs[n-3].ToolCallID != "w1" {
		t.Errorf("repaired transcript tail: %+v", msgs[max(0, len(msgs)-4):])
	}
	// Nothing stored was lost, and the stored transcript was not rewritten.
	d := e.show(started.SessionID)
	var toolMsgs []string
	for _, m := range d.Messages {
		if m.Role == protocol.RoleTool {
			toolMsgs = append(toolMsgs, m.ToolCallID)
		}
	}
	if strings.Join(toolMsgs, ",") != "w1" {
		t.Errorf("stored tool results %v, want only w1", toolMsgs)
	}
	if d.Session.Status != protocol.StatusIdle {
		t.Errorf("status %s", d.Session.Status)
	}
}

func TestRunEditBuildFix(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH; cannot build the workspace")
	}
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"fmt.Println(\"hello\")","new_string":"fmt.Println(greeting)"}`),
		llmtest.Call("run_command", `{"command":"go build ./... 2>&1"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"func main() {","new_string":"const greeting = \"hello, fixed\"\n\nfunc main() {"}`),
		llmtest.Call("run_command", `{"command":"go build -o app . && ./app"}`),
		llmtest.Text("Fixed: the build passes and prints the greeting."),
	)
	e.writeWS("go.mod", "module demo\n\ngo 1.21\n")
	e.writeWS("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n")
	cmd := e.command(context.Background(), "run", "--yolo", "make it print a constant greeting")
	// The user's build cache keeps `go build` in the workspace fast.
	gocache, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(goBin)+":"+os.Getenv("PATH"),
		"GOCACHE="+strings.TrimSpace(string(gocache)), "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6\n%s", len(reqs), out)
	}
	lastTool := func(r llmtest.Request) string {
		msgs := r.Chat.Messages
		return msgs[len(msgs)-1].Content
	}
	if got := lastTool(reqs[3]); !strings.Contains(got, "undefined: greeting") || !strings.Contains(got, "exit code 1") {
		t.Errorf("the model did not see the build error: %q", got)
	}
	if got := lastTool(reqs[2]); !strings.Contains(got, "+\tfmt.Println(greeting)") {
		t.Errorf("edit_file returned no diff: %q", got)
	}
	if got := lastTool(reqs[5]); !strings.Contains(got, "hello, fixed") || !strings.Contains(got, "exit code 0") {
		t.Errorf("the fixed program's output: %q", got)
	}
	src, _ := os.ReadFile(filepath.Join(e.ws, "main.go"))
	if !strings.Contains(string(src), "const greeting") {
		t.Errorf("main.go after the fix:\n%s", src)
	}
}

// pendingRequest returns the id of the session's only pending approval.
func (e *env) pendingRequest(id string) string {
	e.t.Helper()
	r := e.run("", "sessions", "show", id, "--json")
	var d struct {
		Session  protocol.Session    `json:"session"`
		Approval []protocol.Approval `json:"pendingApprovals"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("sessions show: %v\n%s", err, r.stdout)
	}
	if d.Session.Status != protocol.StatusWaitingForApproval || len(d.Approval) != 1 {
		e.t.Fatalf("session %s: status %s, %d pending approvals", id, d.Session.Status, len(d.Approval))
	}
	return d.Approval[0].ID
}

func TestApprovalPausesAndResumesInAnotherProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "r", Name: "read_file", Arguments: `{"path":"main.go"}`},
		}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"v1","new_string":"v2"}`},
			{ID: "after", Name: "list_dir", Arguments: `{}`},
		}},
		llmtest.Text("edited"),
	)
	e.writeWS("main.go", "package main // v1\n")
	r := e.run("", "run", "--json", "--on-ask", "pause", "bump the version")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (paused)\n%s", r.code, r.stderr)
	}
	evs := r.events(t)
	id := sessionOf(t, evs)
	var req protocol.Event
	for _, ev := range evs {
		if ev.Type == protocol.EventPermissionRequested {
			req = ev
		}
	}
	if req.RequestID == "" || req.ToolCallID != "e1" || req.Text != "edit_file(main.go)" {
		t.Fatalf("permission.requested %+v", req)
	}
	if evs[len(evs)-1].Type != protocol.EventTurnPaused {
		t.Errorf("last event %s, want turn.paused", evs[len(evs)-1].Type)
	}
	if !strings.Contains(r.stderr, "mx-claw approve "+id+" "+req.RequestID) {
		t.Errorf("stderr does not say how to approve: %q", r.stderr)
	}
	if got := e.pendingRequest(id); got != req.RequestID {
		t.Fatalf("pending request %s, want %s", got, req.RequestID)
	}
	src, _ := os.ReadFile(filepath.Join(e.ws, "main.go"))
	if strings.Contains(string(src), "v2") {
		t.Fatal("the edit ran before approval")
	}

	// A new process approves; the turn resumes exactly there.
	a := e.run("", "approve", id, req.RequestID, "--always", "--json")
	if a.code != 0 {
		t.Fatalf("approve: exit %d\n%s", a.code, a.stderr)
	}
	src, _ = os.ReadFile(filepath.Join(e.ws, "main.go"))
	if !strings.Contains(string(src), "v2") {
		t.Errorf("main.go after approval: %q", src)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	res := toolResults(reqs[2])
	if !strings.Contains(res["e1"], "+package main // v2") || !strings.Contains(res["after"], "main.go") {
		t.Errorf("results after resume: %v", res)
	}
	if d := e.show(id); d.Session.Status != protocol.StatusIdle {
		t.Errorf("status after resume %s", d.Session.Status)
	}
	// Answering again fails clearly.
	again := e.run("", "approve", id, req.RequestID)
	if again.code != 2 || !strings.Contains(again.stderr, "no such pending approval") {
		t.Errorf("second approval: exit %d, %q", again.code, again.stderr)
	}

	// The --always grant covers the same call in a new session of this
	// project: no pause.
	e.srv.Enqueue(
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"v2","new_string":"v3"}`),
		llmtest.Text("edited again"),
	)
	n := e.run("", "run", "--on-ask", "pause", "bump it again")
	if n.code != 0 {
		t.Fatalf("new session: exit %d\n%s", n.code, n.stderr)
	}
	src, _ = os.ReadFile(filepath.Join(e.ws, "main.go"))
	if !strings.Contains(string(src), "v3") {
		t.Errorf("the grant did not apply to the next session: %q", src)
	}
}

func TestRejectWithFeedbackReachesModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "run_command", Arguments: `{"command":"touch /tmp/should-not-exist-mx"}`}}},
		llmtest.Text("understood"),
	)
	r := e.run("", "run", "--json", "--on-ask", "pause", "touch it")
	if r.code != 4 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	rq := e.pendingRequest(id)
	j := e.run("", "reject", id, rq, "--message", "use a file in the workspace instead")
	if j.code != 0 {
		t.Fatalf("reject: exit %d\n%s", j.code, j.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])["c"]
	if res != "User rejected this tool call. The user said: use a file in the workspace instead" {
		t.Errorf("rejection result %q", res)
	}
	if !strings.Contains(j.stdout, "understood") {
		t.Errorf("resumed turn output %q", j.stdout)
	}
}

func TestPermissionsTestExplains(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "permissions", "test", "ls && rm -rf ~")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"deny", "catastrophic", "ls"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestMalformedSettingsStopTheRun(t *testing.T) {
	t.Parallel()
	// A broken deny rule stops the run even before the project is
	// trusted; a broken allow rule once it is (before, allow rules are
	// not parsed at all).
	for _, tt := range []struct{ text, flag string }{
		{`{"permissions":{"deny":["run_command(go test"]}}`, "--permission-mode=default"},
		{`{"permissions":{"allow":["run_command(go test"]}}`, "--trust"},
	} {
		e := newEnv(t, llmtest.Text("never"))
		e.writeWS(".mx-claw/settings.json", tt.text)
		r := e.run("", "run", tt.flag, "hi")
		if r.code != 2 || !strings.Contains(r.stderr, "settings.json") || !strings.Contains(r.stderr, "run_command(go test") {
			t.Errorf("%s: exit %d, stderr %q: want exit 2 naming the file and the entry", tt.text, r.code, r.stderr)
		}
		if n := len(e.srv.ChatRequests()); n != 0 {
			t.Errorf("%d requests with broken settings", n)
		}
	}
}

func TestUntrustedProjectCannotLoosen(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch project-allowed"}`), llmtest.Text("a"),
		llmtest.Call("run_command", `{"command":"touch project-allowed"}`), llmtest.Text("b"),
	)
	e.writeWS(".mx-claw/settings.json", `{"permissions":{"allow":["run_command(touch:*)"],"defaultMode":"bypass"}}`)
	if r := e.run("", "run", "untrusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "project-allowed")); err == nil {
		t.Fatal("an untrusted project's allow rule or bypass mode took effect")
	}
	if r := e.run("", "run", "--trust", "trusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "project-allowed")); err != nil {
		t.Error("a trusted project's allow rule did not apply")
	}
}

func TestHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "blocked", Name: "run_command", Arguments: `{"command":"touch blocked-file"}`},
			{ID: "rewritten", Name: "write_file", Arguments: `{"path":"original.txt","content":"x"}`},
			{ID: "slow", Name: "list_dir", Arguments: `{}`},
		}},
		llmtest.Text("done"),
	)
	hookDir := filepath.Join(e.home, "hooks")
	os.MkdirAll(hookDir, 0o755)
	write := func(name, body string) string {
		p := filepath.Join(hookDir, name)
		if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	block := write("block.sh", `cat >/dev/null; echo "no shell commands in this repo" >&2; exit 2`+"\n")
	rewrite := write("rewrite.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"path":"rewritten.txt","content":"from hook"}}}'`+"\n")
	slow := write("slow.sh", "sleep 5\n")
	e.writeHome("settings.json", fmt.Sprintf(`{"hooks":{"PreToolUse":[
		{"matcher":"Bash","hooks":[{"type":"command","command":%q}]},
		{"matcher":"write_file","hooks":[{"type":"command","command":%q}]},
		{"matcher":"list_dir","hooks":[{"type":"command","command":%q,"timeout":1}]}]}}`, block, rewrite, slow))
	r := e.run("", "run", "--permission-mode", "acceptEdits", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if res["blocked"] != "Tool failed: blocked by a hook: no shell commands in this repo" {
		t.Errorf("blocked call result %q", res["blocked"])
	}
	if _, err := os.Stat(filepath.Join(e.ws, "blocked-file")); err == nil {
		t.Error("the blocked command ran")
	}
	if got, err := os.ReadFile(filepath.Join(e.ws, "rewritten.txt")); err != nil || string(got) != "from hook" {
		t.Errorf("rewritten input: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "original.txt")); err == nil {
		t.Error("the original input ran too")
	}
	if !strings.Contains(r.stderr, "timed out after 1s") {
		t.Errorf("no timeout warning on stderr: %q", r.stderr)
	}
	if !strings.Contains(res["slow"], "./") {
		t.Errorf("the call after a slow hook did not run: %q", res["slow"])
	}
}

func TestUntrustedProjectHooksDoNotRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("list_dir", `{}`), llmtest.Text("a"), llmtest.Call("list_dir", `{"depth":1}`), llmtest.Text("b"))
	marker := filepath.Join(e.home, "hook-ran")
	e.writeWS(".mx-claw/settings.json", fmt.Sprintf(`{"permissions":{"defaultMode":"bypass"},
		"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker))
	if r := e.run("", "run", "untrusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hook of an untrusted project ran")
	}
	if r := e.run("", "run", "--trust", "trusted"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the trusted project's hook did not run")
	}
}

func TestTodoWriteStoredWithSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("todo_write", `{"todos":[{"content":"read the code","status":"completed"},{"content":"fix the bug","status":"in_progress"},{"content":"run tests","status":"pending"}]}`),
		llmtest.Text("working on it"),
	)
	r := e.run("", "run", "--json", "plan it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var todo *protocol.Event
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventTodoUpdated {
			todo = &ev
		}
	}
	if todo == nil || len(todo.Todos) != 3 || todo.Todos[1].Status != "in_progress" || todo.Sequence == 0 {
		t.Fatalf("todo.updated event %+v", todo)
	}
	show := e.run("", "sessions", "show", todo.SessionID)
	if !strings.Contains(show.stdout, "[~] fix the bug") || !strings.Contains(show.stdout, "[x] read the code") {
		t.Errorf("sessions show lacks the task list:\n%s", show.stdout)
	}
}

func TestAgentsMdFrozenIntoSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	os.MkdirAll(filepath.Join(e.ws, ".git"), 0o755)
	e.writeWS("AGENTS.md", "Always run gofmt. Never touch vendor/.\n")
	e.writeHome("AGENTS.md", "The user prefers short answers.\n")
	if r := e.run("", "run", "first"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	e.writeWS("AGENTS.md", "CHANGED instructions.\n")
	if r := e.run("", "run", "--continue", "second"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "a new session"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	system := func(i int) string {
		var parts []string
		for _, m := range e.srv.ChatRequests()[i].Chat.Messages {
			if m.Role == "system" {
				parts = append(parts, m.Content)
			}
		}
		return strings.Join(parts, "\n")
	}
	first, second, third := system(0), system(1), system(2)
	if !strings.Contains(first, "Never touch vendor/") || !strings.Contains(first, "prefers short answers") {
		t.Errorf("first request's context lacks AGENTS.md:\n%s", first)
	}
	if strings.Index(first, "prefers short answers") > strings.Index(first, "Never touch vendor/") {
		t.Error("the home AGENTS.md must come before the project's (outermost first)")
	}
	if second != first {
		t.Errorf("the session's frozen context changed after AGENTS.md was edited:\n%s", second)
	}
	if !strings.Contains(third, "CHANGED instructions") {
		t.Errorf("a new session does not see the edited AGENTS.md:\n%s", third)
	}
}

func TestUsageCarriesContextAndCost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "priced", Usage: &llmtest.Usage{PromptTokens: 1000000, CompletionTokens: 100000, CachedTokens: 200000}})
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	r := e.run("", "run", "--json", "how much")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var usage, done *protocol.Event
	for _, ev := range r.events(t) {
		switch ev.Type {
		case protocol.EventUsage:
			usage = &ev
		case protocol.EventTurnCompleted:
			done = &ev
		}
	}
	// gpt-4o: $2.50 per M input, $1.25 per M cached input, $10 per M output.
	want := 0.8*2.50 + 0.2*1.25 + 0.1*10
	if usage == nil || usage.CostUSD == nil || *usage.CostUSD < want-1e-9 || *usage.CostUSD > want+1e-9 {
		t.Fatalf("usage event %+v, want cost %.4f", usage, want)
	}
	if usage.ContextPercent <= 0 || done == nil || done.CostUSD == nil || *done.CostUSD != *usage.CostUSD {
		t.Errorf("context %% %v, turn.completed %+v", usage.ContextPercent, done)
	}
}

func TestApproveWithEditedRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch a.txt"}`), llmtest.Text("a"),
		llmtest.Call("run_command", `{"command":"touch b.txt"}`), llmtest.Text("b"),
	)
	r := e.run("", "run", "--json", "--on-ask", "pause", "touch a")
	if r.code != 4 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	rq := e.pendingRequest(id)
	if bad := e.run("", "approve", id, rq, "--rule", "run_command(touch:*)"); bad.code != 2 {
		t.Errorf("--rule without a scope: exit %d", bad.code)
	}
	if bad := e.run("", "approve", id, rq, "--always", "--rule", "run_command(touch"); bad.code != 2 {
		t.Errorf("malformed --rule: exit %d", bad.code)
	}
	if a := e.run("", "approve", id, rq, "--always", "--rule", "run_command(touch:*)"); a.code != 0 {
		t.Fatalf("approve: exit %d: %s", a.code, a.stderr)
	}
	// The edited (wider) rule covers another file in a new session.
	if n := e.run("", "run", "--on-ask", "pause", "touch b"); n.code != 0 {
		t.Fatalf("new session: exit %d: %s", n.code, n.stderr)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// newSmallWindowEnv is an env whose model has a small context window, so
// that a session of a few dozen steps must compact, and whose workspace
// holds big.txt, a 400-line file to read piece by piece.
func newSmallWindowEnv(t *testing.T, window int) *env {
	t.Helper()
	e := newEnv(t)
	e.writeHome("config.json", fmt.Sprintf(`{"version":1,"activeProvider":"fake","maxIterations":100,
		"modelSettings":{"fake/fake-model":{"contextWindow":%d,"maxOutputTokens":1000}},
		"providers":{"fake":{"kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"requiresApiKey":false}}}`, window, e.srv.URL()))
	var lines []string
	for i := 0; i < 400; i++ {
		lines = append(lines, fmt.Sprintf("line %03d of a long file that the model reads piece by piece", i))
	}
	e.writeWS("big.txt", strings.Join(lines, "\n")+"\n")
	return e
}

// readBigFile answers requests without tools (summaries) with summary, and
// the others with a read of the next piece of big.txt, steps times, then
// with done.
func readBigFile(steps int, done string, summary func(req *llmtest.Request) llmtest.Reply) llmtest.Responder {
	var mu sync.Mutex
	main := 0
	return func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return summary(req)
		}
		mu.Lock()
		main++
		n := main
		mu.Unlock()
		if n > steps {
			return llmtest.Text(done)
		}
		return llmtest.Call("read_file", fmt.Sprintf(`{"path":"big.txt","offset":%d,"limit":25}`, (n*5)%370+1))
	}
}

// checkPairs fails if a request's messages split an assistant's tool calls
// from their results.
func checkPairs(t *testing.T, i int, msgs []llmtest.ChatMessage) {
	t.Helper()
	for j := 0; j < len(msgs); j++ {
		if len(msgs[j].ToolCalls) == 0 {
			if msgs[j].Role == "tool" {
				t.Errorf("request %d: tool result %s at %d follows no tool call", i, msgs[j].ToolCallID, j)
			}
			continue
		}
		for k, c := range msgs[j].ToolCalls {
			n := j + 1 + k
			if n >= len(msgs) || msgs[n].Role != "tool" || msgs[n].ToolCallID != c.ID {
				t.Errorf("request %d: call %s at %d is not followed by its result", i, c.ID, j)
			}
		}
		j += len(msgs[j].ToolCalls)
	}
}

func TestCompactionKeepsLedgerAndPairs(t *testing.T) {
	t.Parallel()
	const window, steps = 16000, 60
	e := newSmallWindowEnv(t, window)
	e.srv.SetResponder(readBigFile(steps, "done reading", func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Text(fmt.Sprintf("SUMMARY: the user wants big.txt read; %d messages summarised.", len(req.Chat.Messages)))
	}))
	r := e.run("", "run", "--json", "Read big.txt piece by piece. Never touch vendor/.")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	compactions := 0
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventCompaction {
			compactions++
		}
	}
	reqs := e.srv.ChatRequests()
	summaries := 0
	var lastMain llmtest.Request
	for i, req := range reqs {
		if len(req.Chat.Tools) == 0 {
			summaries++
			continue
		}
		lastMain = req
		if req.Size > window*4 {
			t.Errorf("request %d is %d bytes, more than a %d-token window holds", i, req.Size, window)
		}
		checkPairs(t, i, req.Chat.Messages)
		var all strings.Builder
		for _, m := range req.Chat.Messages {
			all.WriteString(m.Content)
		}
		if !strings.Contains(all.String(), "Never touch vendor/.") {
			t.Errorf("request %d lost the user's constraint", i)
		}
	}
	if compactions < 2 || summaries < 2 {
		t.Fatalf("%d compaction events, %d summary requests; want at least 2 of each", compactions, summaries)
	}
	if !strings.Contains(lastMain.Chat.Messages[1].Content, "SUMMARY:") && !strings.Contains(lastMain.Chat.Messages[2].Content, "SUMMARY:") {
		t.Errorf("the last request carries no summary: %+v", lastMain.Chat.Messages[:3])
	}
	// A new process continuing the session projects the same view.
	before := len(reqs)
	r2 := e.run("", "run", "--json", "--continue", "anything else?")
	if r2.code != 0 {
		t.Fatalf("continue: exit %d: %s", r2.code, r2.stderr)
	}
	compactedAgain := false
	for _, ev := range r2.events(t) {
		compactedAgain = compactedAgain || ev.Type == protocol.EventCompaction
	}
	next := e.srv.ChatRequests()[before]
	if !compactedAgain {
		prev := lastMain.Chat.Messages
		for i := range prev {
			if next.Chat.Messages[i].Content != prev[i].Content || next.Chat.Messages[i].Role != prev[i].Role {
				t.Fatalf("after a restart message %d differs:\n%q\nwant\n%q", i, next.Chat.Messages[i].Content, prev[i].Content)
			}
		}
	}
}

func TestManualCompact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY focusing on the API")
		}
		return llmtest.Text("answer")
	})
	r := e.run("", "run", "--json", "first question")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	c := e.run("", "sessions", "compact", id, "--instructions", "focus on the API")
	if c.code != 0 || !strings.Contains(c.stdout, "SUMMARY focusing on the API") {
		t.Fatalf("compact: exit %d %q %q", c.code, c.stdout, c.stderr)
	}
	reqs := e.srv.ChatRequests()
	var summaryReq string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		summaryReq += m.Content
	}
	if !strings.Contains(summaryReq, "focus on the API") {
		t.Errorf("the summary request lacks the instructions")
	}
	r2 := e.run("", "run", "--continue", "second question")
	if r2.code != 0 {
		t.Fatalf("exit %d: %s", r2.code, r2.stderr)
	}
	reqs = e.srv.ChatRequests()
	var view string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		view += m.Role + ":" + m.Content + "\n"
	}
	if !strings.Contains(view, "SUMMARY focusing on the API") || !strings.Contains(view, "first question") {
		t.Errorf("the next view lacks the summary or the ledger's copy of the user's words:\n%s", view)
	}
	// The stored transcript keeps everything.
	d := e.show(id)
	if len(d.Messages) < 5 {
		t.Errorf("%d stored messages after compaction", len(d.Messages))
	}
}

func TestBudgetStopsBetweenStepsAndContinues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	n := 0
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		n++
		if n > 10 {
			return llmtest.Text("finished")
		}
		// Each step costs $0.025 at gpt-4o prices.
		r := llmtest.Call("list_dir", fmt.Sprintf(`{"depth":%d}`, n%5+1))
		r.ToolCalls[0].Arguments = fmt.Sprintf(`{"path":".","depth":%d}`, n%5+1)
		r.Usage = &llmtest.Usage{PromptTokens: 10000, CompletionTokens: 10}
		if n%5 == 0 {
			r.ToolCalls[0].Arguments = fmt.Sprintf(`{"path":"./","depth":%d}`, n%5+1)
		}
		return r
	})
	r := e.run("", "run", "--json", "--max-budget-usd", "0.06", "spend")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Budget spent: cost") {
		t.Errorf("stderr %q does not name the budget", r.stderr)
	}
	warned := false
	for _, ev := range r.events(t) {
		warned = warned || ev.Type == protocol.EventWarning && strings.Contains(ev.Text, "80%")
	}
	if !warned {
		t.Error("no 80% warning event")
	}
	if got := len(e.srv.ChatRequests()); got != 3 {
		t.Errorf("%d requests, want 3 (stopped before the 4th)", got)
	}
	if c := e.run("", "run", "--continue", "go on"); c.code != 0 {
		t.Errorf("--continue after the budget stop: exit %d: %s", c.code, c.stderr)
	}
}

func TestLoopDetected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Call("list_dir", `{"path":"."}`)
	})
	r := e.run("", "run", "--max-iterations", "20", "loop")
	if r.code != 3 || !strings.Contains(r.stderr, "Loop detected") {
		t.Fatalf("exit %d, stderr %q; want 3 and a loop message", r.code, r.stderr)
	}
	if got := len(e.srv.ChatRequests()); got != 5 {
		t.Errorf("%d requests, want 5", got)
	}
}

func TestSessionBudgetFromConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","budget":{"maxSessionCostUsd":0.03},
		"providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		// $0.025 per answer at gpt-4o prices.
		return llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{PromptTokens: 10000, CompletionTokens: 1}}
	})
	if r := e.run("", "run", "one"); r.code != 0 {
		t.Fatalf("first turn: exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "two"); r.code != 0 {
		t.Fatalf("second turn: exit %d: %s", r.code, r.stderr)
	}
	r := e.run("", "run", "--continue", "three")
	if r.code != 3 || !strings.Contains(r.stderr, "session cost") {
		t.Fatalf("third turn: exit %d, %q; want 3 naming the session budget", r.code, r.stderr)
	}
	list := e.run("", "sessions", "list", "--json")
	if !strings.Contains(list.stdout, `"costUsd": 0.05`) {
		t.Errorf("session cost not stored: %s", list.stdout)
	}
}

func TestCorruptDatabaseIsReportedAndKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("never"))
	garbage := "this is not a database, but it is the user's file\n"
	e.writeHome("mx-claw.db", garbage)
	r := e.run("", "run", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "mx-claw.db") || !strings.Contains(r.stderr, "move it away") {
		t.Errorf("exit %d, stderr %q: want a failure naming the file and what to do", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(e.home, "mx-claw.db")); string(got) != garbage {
		t.Errorf("the database file was changed to %q", got)
	}
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Errorf("%d requests with a corrupt store", n)
	}
}

func TestCompactionFailureFallsBackAndPreCompactHookRuns(t *testing.T) {
	t.Parallel()
	const window = 16000
	e := newSmallWindowEnv(t, window)
	marker := filepath.Join(e.home, "precompact-ran")
	e.writeHome("settings.json", fmt.Sprintf(`{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"cat > %s"}]}]}}`, marker))
	e.srv.SetResponder(readBigFile(40, "done", func(*llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 400, Body: `{"error":{"message":"summaries are broken today"}}`}
	}))
	r := e.run("", "run", "--json", "Read big.txt. Keep going.")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	warned := 0
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventWarning && strings.Contains(ev.Text, "compaction failed") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings that compaction failed, want 1 (no new attempt on every step)", warned)
	}
	for i, req := range e.srv.ChatRequests() {
		if len(req.Chat.Tools) == 0 {
			continue
		}
		if req.Size > window*4 {
			t.Errorf("request %d is %d bytes: the fallback did not keep the view within the window", i, req.Size)
		}
		checkPairs(t, i, req.Chat.Messages)
	}
	data, err := os.ReadFile(marker)
	if err != nil || !strings.Contains(string(data), `"hook_event_name":"PreCompact"`) || !strings.Contains(string(data), `"trigger":"auto"`) {
		t.Errorf("PreCompact hook input: %q, %v", data, err)
	}
}

// TestRunAgainstServerClosingConnections: against a server that closes
// every connection (the peer benchmark's does), each request after the
// first goes out on a connection opened while the agent worked (here: a
// 0.3 s command), with no retry, and with no more connections than
// requests and the one opened after the last answer.
func TestRunAgainstServerClosingConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command":"sleep 0.3"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c3", Name: "run_command", Arguments: `{"command":"sleep 0.31"}`}}},
		llmtest.Text("All done."),
	)
	e.srv.SetCloseConnections(true)
	e.writeWS("notes.txt", "hello\n")
	r := e.run("", "run", "--json", "--yolo", "do it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, `"type":"provider.retry"`) {
		t.Errorf("a request was retried:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "All done.") {
		t.Errorf("no final answer:\n%s", r.stdout)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d chat requests, want 4", len(reqs))
	}
	// The requests that follow a command were sent on a connection that
	// had waited through it.
	for _, i := range []int{1, 3} {
		if waited := reqs[i].Time.Sub(reqs[i].ConnAccepted); waited < 150*time.Millisecond {
			t.Errorf("request %d came on a connection accepted %v before it; want one opened during the command", i+1, waited)
		}
	}
	if n, conns := len(reqs), e.srv.Connections(); conns < n || conns > n+1 {
		t.Errorf("%d connections for %d requests; want %d or %d", conns, n, n, n+1)
	}
}
