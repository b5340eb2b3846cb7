// End-to-end tests of permissions: modes, approvals across processes, rules
// and the trust of a project's settings.

package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

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
