package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// needSandbox skips unless mx-claw finds an enforced sandbox here.
func needSandbox(t *testing.T, e *env) {
	t.Helper()
	r := e.run("", "sandbox", "status", "--json")
	if !strings.Contains(r.stdout, `"enforced": true`) {
		t.Skipf("no sandbox backend runs on this machine:\n%s%s", r.stdout, r.stderr)
	}
}

// TestSandboxWriteOutsideWorkspaceFailsInBypass: even in bypass mode a
// command cannot write outside the workspace, and the model is told why
// and how to ask for more.
func TestSandboxWriteOutsideWorkspaceFailsInBypass(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "out", Name: "run_command", Arguments: `{"command":"echo x > \"$HOME/outside.txt\""}`},
			{ID: "in", Name: "run_command", Arguments: `{"command":"echo x > inside.txt"}`},
		}},
		llmtest.Text("done"),
	)
	needSandbox(t, e)
	r := e.run("", "run", "--yolo", "write files")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.Contains(res["out"], "Read-only file system") && !strings.Contains(res["out"], "Permission denied") {
		t.Errorf("the write outside did not fail: %q", res["out"])
	}
	if !strings.Contains(res["out"], "[sandbox:") || !strings.Contains(res["out"], `"escalate": true`) {
		t.Errorf("the model was not told about the sandbox and escalation: %q", res["out"])
	}
	if _, err := os.Stat(filepath.Join(e.home, "outside.txt")); err == nil {
		t.Error("outside.txt was written")
	}
	if !strings.Contains(res["in"], "exit code 0") {
		t.Errorf("the write inside failed: %q", res["in"])
	}
}

// TestSandboxEscalation: a command asking to run outside the sandbox is
// denied where nobody can approve it, even with an allow rule, and runs
// outside in bypass mode; a catastrophic command stays denied.
func TestSandboxEscalation(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch esc.txt","escalate":true,"justification":"the user asked for it"}`), llmtest.Text("denied"),
		llmtest.Call("run_command", `{"command":"echo x > \"$HOME/escalated.txt\"","escalate":true,"justification":"write the user's file"}`), llmtest.Text("ran"),
		llmtest.Call("run_command", `{"command":"rm -rf ~","escalate":true,"justification":"clean up"}`), llmtest.Text("refused"),
	)
	needSandbox(t, e)
	e.writeHome("settings.json", `{"permissions":{"allow":["run_command(touch:*)"]}}`)
	if r := e.run("", "run", "try"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := lastToolResult(e); !strings.Contains(got, "outside the sandbox: the user asked for it") || !strings.Contains(got, "nobody can approve") {
		t.Errorf("escalation was not asked for: %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "esc.txt")); err == nil {
		t.Fatal("the escalated command ran without approval")
	}
	if r := e.run("", "run", "--yolo", "--continue", "again"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "escalated.txt")); err != nil {
		t.Errorf("bypass mode did not run the escalated command outside the sandbox: %v (%s)", err, lastToolResult(e))
	}
	if r := e.run("", "run", "--yolo", "--continue", "clean"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := lastToolResult(e); !strings.Contains(got, "catastrophic") {
		t.Errorf("an escalated catastrophic command was not denied: %q", got)
	}
}

// lastToolResult is the last tool result the model was sent.
func lastToolResult(e *env) string {
	reqs := e.srv.ChatRequests()
	msgs := reqs[len(reqs)-1].Chat.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}

// TestSandboxNoBackendFailsClosed: without a backend an allow rule does
// not let a command that is not read-only run unasked, the user is told,
// and bypass mode still runs it.
func TestSandboxNoBackendFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch made"}`), llmtest.Text("a"),
		llmtest.Call("run_command", `{"command":"ls"}`), llmtest.Text("b"),
	)
	e.writeHome("settings.json", `{"permissions":{"allow":["run_command(touch:*)"]}}`)
	cmd := e.command(context.Background(), "run", "--json", "touch it")
	cmd.Env = append(cmd.Env, "MX_CLAW_SANDBOX_BACKEND=none")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(string(out), `"type":"warning"`) || !strings.Contains(string(out), "No command sandbox is in force") {
		t.Errorf("the user was not told there is no sandbox:\n%s", out)
	}
	res := toolResults(e.srv.ChatRequests()[1])
	for _, v := range res {
		if !strings.Contains(v, "no command sandbox is in force") {
			t.Errorf("result %q, want an approval asked for because of the missing sandbox", v)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "made")); err == nil {
		t.Error("the command ran without a sandbox and without approval")
	}
	cmd = e.command(context.Background(), "run", "--continue", "list")
	cmd.Env = append(cmd.Env, "MX_CLAW_SANDBOX_BACKEND=none")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if got := lastToolResult(e); !strings.Contains(got, "exit code 0") {
		t.Errorf("a read-only command did not run: %q", got)
	}
}

// TestSandboxBadBwrapFailsTheCommand: a bwrap that cannot run fails the
// command with a clear result; nothing runs unsandboxed.
func TestSandboxBadBwrapFailsTheCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("run_command", `{"command":"touch ran"}`), llmtest.Text("ok"))
	cmd := e.command(context.Background(), "run", "--yolo", "go")
	cmd.Env = append(cmd.Env, "MX_CLAW_SANDBOX_BACKEND=bwrap", "MX_CLAW_BWRAP=/nonexistent/bwrap")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, v := range toolResults(e.srv.ChatRequests()[1]) {
		if !strings.Contains(v, "sandbox (bwrap) could not be set up") || !strings.Contains(v, "did not run") {
			t.Errorf("result %q, want the setup failure", v)
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran")); err == nil {
		t.Error("the command ran without its sandbox")
	}
}

// TestKillMidCommandStopsItsLaterWrite: kill -9 of mx-claw while a
// command runs; the command's later write never happens — in the sandbox
// (it dies with mx-claw) and without one (the leader dies with mx-claw,
// and the next mx-claw kills what it left in the background).
func TestKillMidCommandStopsItsLaterWrite(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"workspace-write", "off"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			script := `{"command":"echo started > started.txt; (sleep 2; echo late > late.txt) & sleep 2; echo late > late2.txt"}`
			e := newEnv(t, llmtest.Call("run_command", script), llmtest.Text("ok"))
			if mode != "off" {
				needSandbox(t, e)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, ch, _ := e.startJSON(ctx, "--yolo", "--sandbox", mode, "go")
			waitFor(t, ch, protocol.EventToolStarted)
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(e.ws, "started.txt")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the command did not start")
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			for range ch {
			}
			cmd.Wait()
			// The next start of mx-claw cleans up after the killed one.
			if r := e.run("", "sessions", "list"); r.code != 0 {
				t.Fatalf("sessions list: %d %s", r.code, r.stderr)
			}
			start := time.Now()
			time.Sleep(3*time.Second - time.Since(start) + time.Second)
			for _, f := range []string{"late.txt", "late2.txt"} {
				if _, err := os.Stat(filepath.Join(e.ws, f)); err == nil {
					t.Errorf("%s was written after mx-claw was killed", f)
				}
			}
		})
	}
}

// TestSandboxStatusCommand: `mx-claw sandbox status` names the backend,
// the writable roots, the protected paths and the network.
func TestSandboxStatusCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.writeHome("settings.json", `{"sandbox":{"allowedHosts":["proxy.golang.org"]}}`)
	r := e.run("", "sandbox", "status")
	for _, want := range []string{"Backend:", "Writable:", e.ws, ".git/hooks", ".mcp.json", "Network:", "proxy.golang.org"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if bad := e.run("", "sandbox", "status", "--sandbox", "wide-open"); bad.code != 2 {
		t.Errorf("bad --sandbox: exit %d", bad.code)
	}
	e.writeHome("settings.json", `{"sandbox":{"mode":"nope"}}`)
	if bad := e.run("", "sandbox", "status"); bad.code != 2 || !strings.Contains(bad.stderr, "settings.json") {
		t.Errorf("bad settings: exit %d %s", bad.code, bad.stderr)
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		d := e.run("", "doctor")
		if !strings.Contains(d.stdout, "Sandbox:") {
			t.Errorf("doctor does not show the sandbox:\n%s", d.stdout)
		}
	}
}
