package main_test

// The Claude Code hooks compatibility suite: hook scripts written for this
// project in the shapes published Claude Code hooks take (a Python
// validator keyed on tool_name, bash + jq guards on
// .tool_input.file_path, readers of .tool_response and transcript_path,
// SessionStart scripts writing CLAUDE_ENV_FILE), installed as their
// authors document for Claude Code — in .claude/settings.json — and run
// end to end through `mx-claw run` against the fake model. Each asserts
// the effect Claude Code's hooks reference promises.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// need skips the test when a program the hook scripts use is missing.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed (make test-deps installs it); the hook scripts of this test use it", p)
		}
	}
}

// claudeHook writes an executable hook script into the workspace's
// .claude/hooks and returns the command Claude Code's docs recommend to
// run it.
func (e *env) claudeHook(name, body string) string {
	e.t.Helper()
	e.writeWS(".claude/hooks/"+name, body)
	if err := os.Chmod(filepath.Join(e.ws, ".claude/hooks", name), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return `"$CLAUDE_PROJECT_DIR"/.claude/hooks/` + name
}

// claudeSettings writes .claude/settings.json with the hooks object and,
// if given, the permissions object.
func (e *env) claudeSettings(hooks map[string]any, permissions ...map[string]any) {
	e.t.Helper()
	s := map[string]any{"hooks": hooks}
	if len(permissions) > 0 {
		s["permissions"] = permissions[0]
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	e.writeWS(".claude/settings.json", string(data))
}

// on is one matcher group of the settings format.
func on(matcher string, hooks ...map[string]any) []any {
	return []any{map[string]any{"matcher": matcher, "hooks": hooks}}
}

// command is a command hook entry.
func command(cmd string) map[string]any { return map[string]any{"type": "command", "command": cmd} }

// readWS returns a workspace file's content, "" if it is missing.
func (e *env) readWS(name string) string {
	data, _ := os.ReadFile(filepath.Join(e.ws, name))
	return string(data)
}

// The validator of Claude Code's hooks reference, in its shape: Python,
// keyed on tool_name == "Bash", reading tool_input.command, exit 2 with
// the reasons on stderr.
const pythonBashValidator = `#!/usr/bin/env python3
import json, re, sys

RULES = [
    (r"\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r", "refusing recursive forced deletes; remove files one by one"),
    (r"\bgrep\b(?!.*\|)", "use rg instead of grep"),
]

try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"invalid hook input: {e}", file=sys.stderr)
    sys.exit(1)

if data.get("tool_name") != "Bash":
    sys.exit(0)
cmd = data.get("tool_input", {}).get("command", "")
problems = [msg for pattern, msg in RULES if re.search(pattern, cmd)]
if problems:
    for p in problems:
        print("- " + p, file=sys.stderr)
    sys.exit(2)
sys.exit(0)
`

func TestClaudeHookPythonValidatorBlocksBash(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "rm", Name: "run_command", Arguments: `{"command":"rm -rf build"}`},
			{ID: "ok", Name: "run_command", Arguments: `{"command":"ls build"}`},
		}},
		llmtest.Text("done"),
	)
	e.writeWS("build/keep.o", "x")
	e.claudeSettings(map[string]any{"PreToolUse": on("Bash", command("python3 "+e.claudeHook("bash_validator.py", pythonBashValidator)))})
	r := e.run("", "run", "--trust", "--permission-mode", "bypassPermissions", "clean up")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if e.readWS("build/keep.o") != "x" {
		t.Fatal("the validator's exit 2 did not stop rm -rf: the build directory is gone")
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.Contains(res["rm"], "blocked by a hook") || !strings.Contains(res["rm"], "refusing recursive forced deletes") {
		t.Errorf("the model was not given the validator's stderr: %q", res["rm"])
	}
	if !strings.Contains(res["ok"], "keep.o") {
		t.Errorf("an allowed Bash call did not run: %q", res["ok"])
	}
}

// A path guard in the bash + jq shape: it reads .tool_input.file_path
// and refuses .env files, for Edit, MultiEdit and Write.
const jqEnvGuard = `#!/bin/bash
input=$(cat)
file=$(printf '%s' "$input" | jq -r '.tool_input.file_path // empty')
tool=$(printf '%s' "$input" | jq -r '.tool_name')
printf '%s %s\n' "$tool" "$file" >> "$CLAUDE_PROJECT_DIR/guard.log"
case "$file" in
  *.env|*/.env*) echo "Blocked: $file holds secrets and must not be written" >&2; exit 2 ;;
esac
exit 0
`

func TestClaudeHookJqGuardCoversApplyPatch(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	patchEnv := "*** Begin Patch\n*** Add File: config/b.env\n+TOKEN=stolen\n*** End Patch\n"
	patchMixed := "*** Begin Patch\n*** Update File: README.md\n@@\n-old\n+new\n*** Add File: config/c.env\n+X=1\n*** End Patch\n"
	patchOK := "*** Begin Patch\n*** Update File: README.md\n@@\n-old\n+new\n*** Add File: docs/notes.md\n+hello\n*** End Patch\n"
	arg := func(p string) string { b, _ := json.Marshal(map[string]string{"patch": p}); return string(b) }
	e := newEnv(t,
		llmtest.Call("write_file", `{"path":"config/a.env","content":"TOKEN=1"}`),
		llmtest.Call("apply_patch", arg(patchEnv)),
		llmtest.Call("apply_patch", arg(patchMixed)),
		llmtest.Call("read_file", `{"path":"README.md"}`),
		llmtest.Call("apply_patch", arg(patchOK)),
		llmtest.Text("done"),
	)
	e.writeWS("README.md", "old\n")
	e.claudeSettings(map[string]any{"PreToolUse": on("Edit|MultiEdit|Write", command(e.claudeHook("env_guard.sh", jqEnvGuard)))})
	r := e.run("", "run", "--trust", "--permission-mode", "acceptEdits", "configure")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"config/a.env", "config/b.env", "config/c.env"} {
		if _, err := os.Stat(filepath.Join(e.ws, f)); err == nil {
			t.Errorf("%s was written past the guard", f)
		}
	}
	if e.readWS("README.md") != "new\n" || e.readWS("docs/notes.md") != "hello\n" {
		t.Errorf("an allowed patch did not apply: README %q, notes %q", e.readWS("README.md"), e.readWS("docs/notes.md"))
	}
	if e.readWS("README.md") == "new\n" && strings.Count(e.readWS("guard.log"), "README.md") != 2 {
		t.Errorf("the guard did not see each patched file once per patch:\n%s", e.readWS("guard.log"))
	}
	log := e.readWS("guard.log")
	for _, want := range []string{
		"Write " + filepath.Join(e.ws, "config/a.env"),
		"Write " + filepath.Join(e.ws, "config/b.env"),
		"Edit " + filepath.Join(e.ws, "README.md"),
		"Write " + filepath.Join(e.ws, "config/c.env"),
		"Write " + filepath.Join(e.ws, "docs/notes.md"),
	} {
		if !strings.Contains(log, want+"\n") {
			t.Errorf("the guard never saw %q:\n%s", want, log)
		}
	}
	reqs := e.srv.ChatRequests()
	if res := toolResults(reqs[1])["call_1"]; !strings.Contains(res, "holds secrets") {
		t.Errorf("write_file was not blocked with the guard's reason: %q", res)
	}
	for i, id := range []string{"call_2", "call_3"} {
		if res := toolResults(reqs[i+2])[id]; !strings.Contains(res, "holds secrets") {
			t.Errorf("apply_patch %d was not blocked with the guard's reason: %q", i+1, res)
		}
	}
}

// A PostToolUse reader of .tool_response.stdout, and a PostToolUseFailure
// logger of .error.
const stdoutReader = `#!/bin/bash
input=$(cat)
out=$(printf '%s' "$input" | jq -r '.tool_response.stdout // empty')
interrupted=$(printf '%s' "$input" | jq -r '.tool_response.interrupted')
if printf '%s' "$out" | grep -q '^FAIL'; then
  jq -n --arg r "Tests failed ($(printf '%s' "$out" | head -1)); fix them before going on" '{decision: "block", reason: $r}'
fi
echo "interrupted=$interrupted" >> "$CLAUDE_PROJECT_DIR/post.log"
`

const failureLogger = `#!/bin/bash
jq -c '{tool_name, error, is_interrupt, command: .tool_input.command}' >> "$CLAUDE_PROJECT_DIR/failures.jsonl"
`

func TestClaudeHookPostToolUseReadsStdout(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"echo 'FAIL: TestParse'; echo ok"}`),
		llmtest.Call("run_command", `{"command":"echo broken >&2; exit 3"}`),
		llmtest.Text("done"),
	)
	e.claudeSettings(map[string]any{
		"PostToolUse":        on("Bash", command(e.claudeHook("stdout.sh", stdoutReader))),
		"PostToolUseFailure": on("Bash", command(e.claudeHook("failures.sh", failureLogger))),
	})
	r := e.run("", "run", "--trust", "--yolo", "test")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if res := toolResults(reqs[1])["call_1"]; !strings.Contains(res, "Hook feedback: Tests failed (FAIL: TestParse); fix them") {
		t.Errorf("the PostToolUse block did not reach the model: %q", res)
	}
	if got := e.readWS("post.log"); got != "interrupted=false\n" {
		t.Errorf("PostToolUse ran %q; want once, for the successful command only", got)
	}
	var f struct {
		ToolName    string `json:"tool_name"`
		Error       string `json:"error"`
		IsInterrupt *bool  `json:"is_interrupt"`
		Command     string `json:"command"`
	}
	if err := json.Unmarshal([]byte(e.readWS("failures.jsonl")), &f); err != nil {
		t.Fatalf("PostToolUseFailure input: %v\n%s", err, e.readWS("failures.jsonl"))
	}
	if f.ToolName != "Bash" || !strings.Contains(f.Error, "broken") || f.IsInterrupt == nil || *f.IsInterrupt || f.Command != "echo broken >&2; exit 3" {
		t.Errorf("PostToolUseFailure input = %+v", f)
	}
}

// A Stop hook in the common shape: it reads transcript_path (JSONL), finds
// the last assistant text and blocks until it reports the tests passing.
const transcriptStop = `#!/usr/bin/env python3
import json, os, sys

data = json.load(sys.stdin)
log = os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "stop.log")
last = ""
lines = 0
with open(data["transcript_path"]) as f:
    for raw in f:
        lines += 1
        entry = json.loads(raw)
        if entry.get("type") != "assistant":
            continue
        for block in entry.get("message", {}).get("content", []):
            if block.get("type") == "text":
                last = block["text"]
with open(log, "a") as f:
    f.write(json.dumps({"active": data["stop_hook_active"], "last": last, "lines": lines}) + "\n")
if "TESTS PASS" not in last:
    print(json.dumps({"decision": "block", "reason": "Run the tests and report TESTS PASS"}))
`

func TestClaudeHookStopReadsTranscript(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"echo hi"}`),
		llmtest.Text("I am done."),
		llmtest.Text("Still done."),
		llmtest.Text("TESTS PASS"),
	)
	e.claudeSettings(map[string]any{"Stop": on("", command("python3 "+e.claudeHook("stop.py", transcriptStop)))})
	r := e.run("", "run", "--trust", "--yolo", "finish the work")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type entry struct {
		Active bool
		Last   string
		Lines  int
	}
	var got []entry
	sc := bufio.NewScanner(strings.NewReader(e.readWS("stop.log")))
	for sc.Scan() {
		var en entry
		if err := json.Unmarshal(sc.Bytes(), &en); err != nil {
			t.Fatal(err)
		}
		got = append(got, en)
	}
	want := []entry{{false, "I am done.", 4}, {true, "Still done.", 6}, {true, "TESTS PASS", 8}}
	if !slices.Equal(got, want) {
		t.Errorf("Stop hook runs = %+v, want %+v (each block honoured, stop_hook_active from the second on, the transcript growing)", got, want)
	}
	if n := len(e.srv.ChatRequests()); n != 4 {
		t.Errorf("%d model requests, want 4", n)
	}
	// The transcript is Claude Code's: the prompt as a user line, the call
	// as a Bash tool_use, its result as a tool_result with toolUseResult.
	matches, _ := filepath.Glob(filepath.Join(e.home, "hooks", "*", "transcript.jsonl"))
	if len(matches) != 1 {
		t.Fatalf("transcripts: %v", matches)
	}
	data, _ := os.ReadFile(matches[0])
	for _, want := range []string{
		`"type":"user","message":{"content":"finish the work","role":"user"}`,
		`"type":"tool_use","id":"call_1","name":"Bash","input":{"command":"echo hi"}`,
		`"toolUseResult":{"content":"hi\n[exit code 0,`,
		`"stdout":"hi"`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("transcript lacks %s:\n%s", want, data)
		}
	}
}

// A SessionStart hook that sets the environment of later commands through
// CLAUDE_ENV_FILE, and logs its source.
const envFileStart = `#!/bin/bash
source=$(jq -r .source)
echo "$source" >> "$CLAUDE_PROJECT_DIR/starts.log"
if [ -n "$CLAUDE_ENV_FILE" ]; then
  echo 'export GREETING="hello from SessionStart"' >> "$CLAUDE_ENV_FILE"
  echo 'export PATH="$PATH:/opt/from-hook"' >> "$CLAUDE_ENV_FILE"
fi
echo "Branch: main"
`

func TestClaudeHookSessionStartEnvFile(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"echo \"$GREETING\" > greeting.txt; case \"$PATH\" in *:/opt/from-hook) echo yes > path.txt;; esac"}`),
		llmtest.Text("done"),
		llmtest.Call("run_command", `{"command":"echo \"$GREETING\" > again.txt"}`),
		llmtest.Text("done again"),
	)
	e.claudeSettings(map[string]any{"SessionStart": on("startup|resume", command(e.claudeHook("start.sh", envFileStart)))})
	r := e.run("", "run", "--trust", "--yolo", "greet")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := e.readWS("greeting.txt"); got != "hello from SessionStart\n" {
		t.Errorf("a command did not get the export written to CLAUDE_ENV_FILE: %q", got)
	}
	if e.readWS("path.txt") != "yes\n" {
		t.Error("PATH was not extended as the env file says")
	}
	reqs := e.srv.ChatRequests()
	if sys := reqs[0].Chat.Messages[0].Content; !strings.Contains(sys, "Branch: main") {
		t.Errorf("SessionStart stdout is not in the new session's context: %q", sys)
	}
	if r := e.run("", "run", "--trust", "--yolo", "--continue", "greet again"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := e.readWS("starts.log"); got != "startup\nresume\n" {
		t.Errorf("SessionStart sources = %q, want startup then resume", got)
	}
	if got := e.readWS("again.txt"); got != "hello from SessionStart\n" {
		t.Errorf("the env file did not reach a resumed session's command: %q", got)
	}
	last := e.srv.ChatRequests()[2].Chat.Messages
	if u := last[len(last)-1].Content; !strings.Contains(u, "greet again") || !strings.Contains(u, "Branch: main") {
		t.Errorf("the resume hook's output is not with the prompt: %q", u)
	}
}

// everyEvent is every hook event Claude Code documents.
var everyEvent = []string{
	"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
	"PermissionDenied", "PostToolUse", "PostToolUseFailure", "Notification", "SubagentStart", "SubagentStop",
	"TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "PreCompact", "PostCompact",
	"SessionEnd", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "CwdChanged", "FileChanged",
	"Elicitation", "ElicitationResult",
}

func TestClaudeSettingsWithEveryEventAndAsync(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"test -e async.done && echo async-was-done || echo async-still-running"}`),
		llmtest.Call("write_file", `{"path":"out.txt","content":"x"}`),
		llmtest.Call("run_command", `{"command":"exit 7"}`),
		llmtest.Text("done"),
	)
	logger := e.claudeHook("log.sh", `#!/bin/bash
jq -c '{e: .hook_event_name, tool: .tool_name, mode: .permission_mode, t: .notification_type}' >> "$CLAUDE_PROJECT_DIR/events.jsonl"
`)
	allow := e.claudeHook("allow.sh", `#!/bin/bash
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'
`)
	hooks := map[string]any{}
	for _, ev := range everyEvent {
		entry := command(logger)
		entry["timeout"] = 600000 // milliseconds, mistaken for seconds: still accepted
		hooks[ev] = on("", entry)
	}
	// An async hook: the call goes on without waiting for it.
	slow := command("sleep 2; touch \"$CLAUDE_PROJECT_DIR/async.done\"")
	slow["async"] = true
	slow["statusMessage"] = "warming caches"
	hooks["PreToolUse"] = []any{
		map[string]any{"matcher": "", "hooks": []any{command(logger)}},
		map[string]any{"matcher": "Bash", "hooks": []any{slow}},
	}
	hooks["PermissionRequest"] = []any{map[string]any{"matcher": "Write", "hooks": []any{command(logger), command(allow)}}}
	// Claude Code's permission rules in the same file apply too.
	e.claudeSettings(hooks, map[string]any{"allow": []string{"Bash"}})
	// Default mode: the write needs approval, which the PermissionRequest
	// hook gives.
	r := e.run("", "run", "--trust", "go")
	if r.code != 0 {
		t.Fatalf("a settings file with every event was refused: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "async.done")); err != nil {
		t.Error("mx-claw run ended before its async hook")
	}
	res := toolResults(e.srv.ChatRequests()[1])
	if !strings.Contains(res["call_1"], "async-still-running") {
		t.Errorf("the call waited for the async hook: %q", res["call_1"])
	}
	if e.readWS("out.txt") != "x" {
		t.Error("the PermissionRequest hook's allow did not let the write run")
	}
	var seen []string
	sc := bufio.NewScanner(strings.NewReader(e.readWS("events.jsonl")))
	for sc.Scan() {
		var ev struct{ E, Tool, Mode string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Mode != "default" {
			t.Errorf("%s: permission_mode %q", ev.E, ev.Mode)
		}
		seen = append(seen, strings.TrimSuffix(ev.E+":"+ev.Tool, ":"))
	}
	want := []string{
		"SessionStart", "UserPromptSubmit",
		"PreToolUse:Bash", "PostToolUse:Bash",
		"PreToolUse:Write", "PermissionRequest:Write", "PostToolUse:Write",
		"PreToolUse:Bash", "PostToolUseFailure:Bash",
		"Stop", "SessionEnd",
	}
	if !slices.Equal(seen, want) {
		t.Errorf("hooks ran for\n %v\nwant\n %v", seen, want)
	}
	if strings.Contains(r.stderr, "mx-claw has no SubagentStop moment") {
		t.Errorf("SubagentStop hooks run now, yet a notice says they never do:\n%s", r.stderr)
	}
	for _, ev := range []string{"Setup", "TeammateIdle"} {
		if n := strings.Count(r.stderr, "mx-claw has no "+ev+" moment"); n != 1 {
			t.Errorf("%d notices that %s hooks never run, want 1:\n%s", n, ev, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, `ignores the key(s) "statusMessage"`) {
		t.Errorf("no notice of the ignored key:\n%s", r.stderr)
	}
}

func TestClaudeHookNotificationWhenWaiting(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t, llmtest.Call("write_file", `{"path":"out.txt","content":"x"}`), llmtest.Text("done"))
	e.claudeSettings(map[string]any{"Notification": on("permission_prompt",
		command(`jq -c '{message, notification_type}' > "$CLAUDE_PROJECT_DIR/notified.json"`))})
	r := e.run("", "run", "--trust", "--on-ask", "pause", "write it")
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (paused): %s", r.code, r.stderr)
	}
	if got := strings.TrimSpace(e.readWS("notified.json")); got != `{"message":"mx-claw needs your permission to use Write","notification_type":"permission_prompt"}` {
		t.Errorf("Notification input = %q", got)
	}
}

func TestClaudeHookContinueFalseStopsTheTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("run_command", `{"command":"touch ran"}`), llmtest.Text("never asked"))
	e.claudeSettings(map[string]any{"PreToolUse": on("Bash",
		command(`cat >/dev/null; echo '{"continue": false, "stopReason": "maintenance window: no commands until 18:00"}'`))})
	r := e.run("", "run", "--trust", "--yolo", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran")); err == nil {
		t.Error("the command ran after a hook said continue: false")
	}
	if n := len(e.srv.ChatRequests()); n != 1 {
		t.Errorf("%d model requests, want 1: the turn must stop after the hook", n)
	}
	if !strings.Contains(r.stderr, "maintenance window: no commands until 18:00") {
		t.Errorf("stopReason not shown to the user:\n%s", r.stderr)
	}
}

func TestClaudeHookPermissionModeSpelling(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("hi"))
	e.claudeSettings(map[string]any{"UserPromptSubmit": on("",
		command(`cat > "$CLAUDE_PROJECT_DIR/prompt.json"`))})
	if r := e.run("", "run", "--trust", "--yolo", "hello"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(e.readWS("prompt.json")), &in); err != nil {
		t.Fatal(err)
	}
	if in["permission_mode"] != "bypassPermissions" || in["prompt"] != "hello" {
		t.Errorf("UserPromptSubmit input = %v", in)
	}
	if p, _ := in["transcript_path"].(string); p == "" {
		t.Error("transcript_path is empty")
	} else if _, err := os.Stat(p); err != nil {
		t.Errorf("transcript_path %s: %v", p, err)
	}
}

// TestBlockedPromptIsErased: a prompt a UserPromptSubmit hook blocks is in
// nothing mx-claw keeps — not the session's title, not the transcript, not
// an event, not the database.
func TestBlockedPromptIsErased(t *testing.T) {
	t.Parallel()
	const secret = "my password is hunter2-e2e"
	e := newEnv(t, llmtest.Text("unused"), llmtest.Text("fine"))
	e.claudeSettings(map[string]any{"UserPromptSubmit": on("", command(`#!/bin/bash
if jq -r .prompt | grep -qi password; then echo "Prompt blocked: it contains a password" >&2; exit 2; fi`))})
	need(t, "jq")
	r := e.run("", "run", "--trust", "--json", secret)
	if r.code == 0 {
		t.Fatal("a blocked prompt ran")
	}
	if strings.Contains(r.stdout, "hunter2") || strings.Contains(r.stderr, "hunter2") {
		t.Errorf("the blocked prompt is in the output:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "Prompt blocked: it contains a password") {
		t.Errorf("the user was not told why:\n%s\n%s", r.stdout, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	d := e.show(id)
	if d.Session.Title != "" || len(d.Messages) != 0 {
		t.Errorf("the blocked prompt was kept: title %q, %d messages", d.Session.Title, len(d.Messages))
	}
	if len(e.srv.ChatRequests()) != 0 {
		t.Error("the model saw the blocked prompt")
	}
	// The next prompt of the session titles it.
	if r := e.run("", "run", "--trust", "--session", id, "add a test"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if d := e.show(id); d.Session.Title != "add a test" {
		t.Errorf("title %q, want the first prompt that went through", d.Session.Title)
	}
	err := filepath.Walk(e.home, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if data, _ := os.ReadFile(p); bytes.Contains(data, []byte("hunter2")) {
			t.Errorf("%s holds the blocked prompt", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClaudeHooksAroundCompaction(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY of the work")
		}
		return llmtest.Text("answer")
	})
	log := filepath.Join(e.home, "compact.log")
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreCompact":   on("manual", command(`jq -c '{e: .hook_event_name, trigger, custom_instructions}' >> `+log)),
		"PostCompact":  on("", command(`jq -c '{e: .hook_event_name, trigger, compact_summary}' >> `+log)),
		"SessionStart": on("compact", command(`jq -c '{e: .hook_event_name, source}' >> `+log+`; echo "Remember: the repo uses tabs"`)),
	}})
	e.writeHome("settings.json", string(settings))
	r := e.run("", "run", "--json", "first question")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	if c := e.run("", "sessions", "compact", id, "--instructions", "keep the API"); c.code != 0 {
		t.Fatalf("compact: exit %d %s", c.code, c.stderr)
	}
	want := `{"e":"PreCompact","trigger":"manual","custom_instructions":"keep the API"}
{"e":"PostCompact","trigger":"manual","compact_summary":"SUMMARY of the work"}
{"e":"SessionStart","source":"compact"}
`
	if data, _ := os.ReadFile(log); string(data) != want {
		t.Errorf("compaction hooks ran as\n%s\nwant\n%s", data, want)
	}
	if r := e.run("", "run", "--continue", "second question"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	var view string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		view += m.Content + "\n"
	}
	if !strings.Contains(view, "Remember: the repo uses tabs") {
		t.Errorf("the SessionStart compact hook's context is not in the view:\n%s", view)
	}
}

// TestClaudeHookUpdatedInputInClaudeNames: a PreToolUse hook that rewrites
// the call in Claude Code's field names (file_path) is obeyed.
func TestClaudeHookUpdatedInputInClaudeNames(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t, llmtest.Call("write_file", `{"path":"out.txt","content":"data"}`), llmtest.Text("done"))
	e.claudeSettings(map[string]any{"PreToolUse": on("Write", command(
		`jq '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input | .file_path = (.file_path | sub("out.txt$"; "sandbox/out.txt")))}}'`))})
	r := e.run("", "run", "--trust", "--permission-mode", "acceptEdits", "write")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if e.readWS("sandbox/out.txt") != "data" {
		t.Errorf("the rewritten file_path was not used; result %q", toolResults(e.srv.ChatRequests()[1]))
	}
	if _, err := os.Stat(filepath.Join(e.ws, "out.txt")); err == nil {
		t.Error("the original path was written too")
	}
}

// TestClaudeHookOnParallelReads: the PostToolUse hooks of read-only calls
// the agent runs in parallel each get their call.
func TestClaudeHookOnParallelReads(t *testing.T) {
	t.Parallel()
	need(t, "jq")
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "r1", Name: "read_file", Arguments: `{"path":"a.txt"}`},
			{ID: "r2", Name: "read_file", Arguments: `{"path":"b.txt"}`},
			{ID: "g", Name: "glob", Arguments: `{"pattern":"*.txt"}`},
		}},
		llmtest.Text("done"),
	)
	e.writeWS("a.txt", "A\n")
	e.writeWS("b.txt", "B\n")
	e.claudeSettings(map[string]any{"PostToolUse": on("Read|Glob", command(
		`jq -r '[.tool_use_id, .tool_name, (.tool_response.file.filePath // (.tool_response.filenames | sort | join(",")))] | join(" ")' >> "$CLAUDE_PROJECT_DIR/reads.log"`))})
	if r := e.run("", "run", "--trust", "read"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(e.readWS("reads.log")), "\n")
	slices.Sort(lines)
	want := []string{"g Glob " + filepath.Join(e.ws, "a.txt") + "," + filepath.Join(e.ws, "b.txt"), "r1 Read " + filepath.Join(e.ws, "a.txt"), "r2 Read " + filepath.Join(e.ws, "b.txt")}
	if !slices.Equal(lines, want) {
		t.Errorf("PostToolUse saw %q, want %q", lines, want)
	}
}
