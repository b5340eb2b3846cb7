// End-to-end tests of `mx-claw run`: answers, events, tool batches, limits,
// signals, bad input and recovery after a crash.

package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

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
	// The user's build cache keeps `go build` in the workspace fast. The
	// sandbox must let the command write it, as a user would configure:
	// on a fresh cache (a clean CI machine) even the standard library is
	// compiled into it.
	out, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := strings.TrimSpace(string(out))
	roots, _ := json.Marshal([]string{gocache})
	e.writeHome("settings.json", `{"sandbox":{"writableRoots":`+string(roots)+`}}`)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(goBin)+":"+os.Getenv("PATH"),
		"GOCACHE="+gocache, "GOTOOLCHAIN=local")
	out, err = cmd.CombinedOutput()
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
