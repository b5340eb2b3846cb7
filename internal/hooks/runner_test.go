package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/testutil"
)

// script writes body as a bash script into dir and returns the command
// that runs it.
func script(t *testing.T, dir, body string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "hook-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("#!/bin/bash\n" + body + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return "bash " + shellQuote(f.Name())
}

// entry is a hook entry of the settings format.
func entry(command string, timeout float64) map[string]any {
	e := map[string]any{"type": "command", "command": command}
	if timeout > 0 {
		e["timeout"] = timeout
	}
	return e
}

// runnerFor returns a Runner with entries as the hooks of ev, matching
// everything.
func runnerFor(t *testing.T, ev EventName, entries ...map[string]any) *Runner {
	t.Helper()
	raw, err := json.Marshal(map[string]any{string(ev): []any{map[string]any{"matcher": "*", "hooks": entries}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(raw, "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Config: c}
}

// event returns an event named name for a session in cwd.
func event(name EventName, cwd string) Event {
	ev := Event{Name: name, SessionID: "s-1", Cwd: cwd, TranscriptPath: filepath.Join(cwd, "t.jsonl")}
	switch name {
	case PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
		ev.ToolName, ev.ToolInput = "run_command", json.RawMessage(`{"command":"rm -rf build"}`)
	case UserPromptSubmit:
		ev.Prompt = "fix the tests"
	}
	return ev
}

func TestRunExit0JSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		event   EventName
		stdout  string
		want    Result // Warnings are checked by wantWarn
		wantWar string
	}{
		{"block", PreToolUse, `{"decision":"block","reason":"no rm here"}`, Result{Decision: Block, Reason: "no rm here"}, ""},
		{"block without reason", PreToolUse, `{"decision":"block"}`, Result{Decision: Block, Reason: `blocked by hook "HOOK"`}, ""},
		{"approve", PreToolUse, `{"decision":"approve","reason":"safe"}`, Result{Decision: Allow, Reason: "safe"}, ""},
		{"permissionDecision deny", PreToolUse, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}`, Result{Decision: Deny, Reason: "not on main"}, ""},
		{"permissionDecision ask", PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}`, Result{Decision: Ask, Reason: "check"}, ""},
		{"permissionDecision beats approve", PreToolUse, `{"decision":"approve","hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}`, Result{Decision: Deny, Reason: "no"}, ""},
		{"permissionDecision cannot undo a block", PreToolUse, `{"decision":"block","reason":"b","hookSpecificOutput":{"permissionDecision":"allow"}}`, Result{Decision: Block, Reason: "b"}, ""},
		{"updatedInput", PreToolUse, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"rm -rf ./build"}}}`, Result{Decision: Allow, UpdatedInput: json.RawMessage(`{"command":"rm -rf ./build"}`)}, ""},
		{"updatedInput not an object", PreToolUse, `{"hookSpecificOutput":{"updatedInput":"ls"}}`, Result{}, "updatedInput ignored: it must be a JSON object"},
		{"updatedInput outside PreToolUse", PostToolUse, `{"hookSpecificOutput":{"updatedInput":{"a":1}}}`, Result{}, "updatedInput is ignored in a PostToolUse hook"},
		{"additionalContext", PostToolUse, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint: 2 warnings"}}`, Result{AdditionalContext: "lint: 2 warnings"}, ""},
		{"plain stdout on UserPromptSubmit", UserPromptSubmit, "branch: main\nuncommitted: 3", Result{AdditionalContext: "branch: main\nuncommitted: 3"}, ""},
		{"plain stdout on SessionStart", SessionStart, "hello", Result{AdditionalContext: "hello"}, ""},
		{"plain stdout on PreToolUse", PreToolUse, "checked", Result{}, ""},
		{"continue false", Stop, `{"continue":false,"stopReason":"build is broken"}`, Result{Halt: true, StopReason: "build is broken"}, ""},
		{"invalid JSON", PreToolUse, `{"decision":`, Result{}, "stdout looks like JSON but is not"},
		{"other event's output", PreToolUse, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`, Result{}, "hookSpecificOutput for PostToolUse ignored in a PreToolUse hook"},
		{"permissionDecision outside PreToolUse", PostToolUse, `{"hookSpecificOutput":{"permissionDecision":"deny"}}`, Result{}, "permissionDecision is ignored in a PostToolUse hook"},
		{"unknown permissionDecision", PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"maybe"}}`, Result{}, `unknown permissionDecision "maybe"`},
		{"block on PostToolUse", PostToolUse, `{"decision":"block","reason":"tests fail now"}`, Result{Decision: Block, Reason: "tests fail now"}, ""},
		{"block on Stop", Stop, `{"decision":"block","reason":"run the tests first"}`, Result{Decision: Block, Reason: "run the tests first"}, ""},
		{"block on SessionStart", SessionStart, `{"decision":"block","reason":"no"}`, Result{}, `hook "HOOK": no`},
		{"approve outside PreToolUse", Stop, `{"decision":"approve"}`, Result{}, ""},
		{"systemMessage", PostToolUse, `{"systemMessage":"formatted 2 files"}`, Result{}, `hook "HOOK": formatted 2 files`},
		{"suppressOutput", PostToolUse, `{"suppressOutput":true}`, Result{}, ""},
		{"updatedInput in Claude Code's names", PreToolUse, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls","description":"list","timeout":1500}}}`,
			Result{UpdatedInput: json.RawMessage(`{"command":"ls","timeout":2}`)}, ""},
		{"continue false beats block", Stop, `{"continue":false,"stopReason":"enough","decision":"block","reason":"more"}`,
			Result{Decision: Block, Reason: "more", Halt: true, StopReason: "enough"}, ""},
		{"PermissionRequest allow", PermissionRequest, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`, Result{Decision: Allow}, ""},
		{"PermissionRequest allow with updatedInput", PermissionRequest, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"ls -la"}}}}`,
			Result{Decision: Allow, UpdatedInput: json.RawMessage(`{"command":"ls -la"}`)}, ""},
		{"PermissionRequest deny", PermissionRequest, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on Fridays"}}}`, Result{Decision: Deny, Reason: "not on Fridays"}, ""},
		{"PermissionRequest deny and interrupt", PermissionRequest, `{"hookSpecificOutput":{"decision":{"behavior":"deny","interrupt":true}}}`,
			Result{Decision: Deny, Reason: "denied by a PermissionRequest hook", Halt: true}, ""},
		{"PermissionRequest unknown behavior", PermissionRequest, `{"hookSpecificOutput":{"decision":{"behavior":"maybe"}}}`, Result{}, `unknown decision.behavior "maybe"`},
		{"decision object outside PermissionRequest", PreToolUse, `{"hookSpecificOutput":{"decision":{"behavior":"allow"}}}`, Result{}, "hookSpecificOutput.decision is ignored in a PreToolUse hook"},
		{"block on PostToolUseFailure", PostToolUseFailure, `{"decision":"block","reason":"retry with -v"}`, Result{Decision: Block, Reason: "retry with -v"}, ""},
		{"additionalContext on PostToolUseFailure", PostToolUseFailure, `{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"flaky test"}}`, Result{AdditionalContext: "flaky test"}, ""},
		{"block on Notification", Notification, `{"decision":"block","reason":"no"}`, Result{}, `hook "HOOK": no`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := script(t, dir, "cat <<'EOF'\n"+tc.stdout+"\nEOF")
			r := runnerFor(t, tc.event, entry(cmd, 0))
			got := r.Run(context.Background(), event(tc.event, dir))
			want := tc.want
			want.Ran = 1
			want.Reason = strings.ReplaceAll(want.Reason, "HOOK", label(cmd))
			warnings := got.Warnings
			got.Warnings = nil
			if !equalResults(got, want) {
				t.Errorf("Run =\n %+v\nwant\n %+v", got, want)
			}
			wantWarn := strings.ReplaceAll(tc.wantWar, "HOOK", label(cmd))
			switch {
			case wantWarn == "" && len(warnings) > 0:
				t.Errorf("unexpected warnings %q", warnings)
			case wantWarn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], wantWarn)):
				t.Errorf("warnings %q, want one containing %q", warnings, wantWarn)
			}
		})
	}
}

// equalResults compares Results, UpdatedInput as JSON values.
func equalResults(a, b Result) bool {
	ai, bi := a.UpdatedInput, b.UpdatedInput
	a.UpdatedInput, b.UpdatedInput = nil, nil
	if (ai == nil) != (bi == nil) {
		return false
	}
	if ai != nil {
		var av, bv any
		if json.Unmarshal(ai, &av) != nil || json.Unmarshal(bi, &bv) != nil {
			return false
		}
		aj, _ := json.Marshal(av)
		bj, _ := json.Marshal(bv)
		if string(aj) != string(bj) {
			return false
		}
	}
	return a.Decision == b.Decision && a.Reason == b.Reason && a.AdditionalContext == b.AdditionalContext &&
		a.Halt == b.Halt && a.StopReason == b.StopReason && a.Ran == b.Ran && slices.Equal(a.Warnings, b.Warnings)
}

func TestRunExit2Blocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Stdout is ignored on exit 2, as in Claude Code: only stderr counts.
	cmd := script(t, dir, `echo '{"decision":"approve"}'; echo "rm -rf is not allowed; use make clean" >&2; exit 2`)
	res := runnerFor(t, PreToolUse, entry(cmd, 0)).Run(context.Background(), event(PreToolUse, dir))
	if res.Decision != Block || res.Reason != "rm -rf is not allowed; use make clean" || !res.Blocked() || len(res.Warnings) != 0 {
		t.Errorf("Run = %+v, want a block with stderr as the reason", res)
	}

	silent := script(t, dir, "exit 2")
	res = runnerFor(t, UserPromptSubmit, entry(silent, 0)).Run(context.Background(), event(UserPromptSubmit, dir))
	if res.Decision != Block || res.Reason != `blocked by hook "`+label(silent)+`"` {
		t.Errorf("silent exit 2: Run = %+v, want a block naming the hook", res)
	}

	// SessionStart cannot block: the reason is a warning.
	res = runnerFor(t, SessionStart, entry(cmd, 0)).Run(context.Background(), event(SessionStart, dir))
	if res.Decision != None || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "rm -rf is not allowed") {
		t.Errorf("SessionStart: Run = %+v, want no decision and the reason as a warning", res)
	}
}

func TestRunExit1WarnsAndContinues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	failing := script(t, dir, "echo 'jq: command not found' >&2; echo second >&2; for i in 1 2 3 4 5 6 7; do echo more >&2; done; exit 1")
	quiet := script(t, dir, "exit 3")
	next := script(t, dir, "echo 'context from the next hook'")
	res := runnerFor(t, UserPromptSubmit, entry(failing, 0), entry(quiet, 0), entry(next, 0)).Run(context.Background(), event(UserPromptSubmit, dir))
	want := []string{
		`hook "` + label(failing) + `" exited with status 1: jq: command not found` + "\nsecond\nmore\nmore\nmore …",
		`hook "` + label(quiet) + `" exited with status 3`,
	}
	if !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings\n %q\nwant\n %q", res.Warnings, want)
	}
	if res.Decision != None || res.Ran != 3 || res.AdditionalContext != "context from the next hook" {
		t.Errorf("Run = %+v, want no decision, 3 hooks run, the last one's context", res)
	}
}

func TestRunTimeoutKillsHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := script(t, dir, `echo $$ > "$MX_CLAW_PROJECT_DIR/hook.pid"; sleep 5 & echo $! > "$MX_CLAW_PROJECT_DIR/child.pid"; wait; echo '{"decision":"block"}'`)
	next := script(t, dir, `echo '{"decision":"approve"}'`)
	r := runnerFor(t, PreToolUse, entry(slow, 1), entry(next, 0))
	start := time.Now()
	res := r.Run(context.Background(), event(PreToolUse, dir))
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("Run took %v, want about the 1s timeout", elapsed)
	}
	want := []string{`hook "` + label(slow) + `" timed out after 1s`}
	if !slices.Equal(res.Warnings, want) || res.Decision != Allow || res.Ran != 2 {
		t.Errorf("Run = %+v, want warnings %q and the next hook's approval", res, want)
	}
	assertGone(t, filepath.Join(dir, "hook.pid"))
	assertGone(t, filepath.Join(dir, "child.pid"))
}

func TestRunDefaultTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runnerFor(t, Stop, entry(script(t, dir, "sleep 5"), 0))
	r.DefaultTimeout = 300 * time.Millisecond
	res := r.Run(context.Background(), event(Stop, dir))
	if len(res.Warnings) != 1 || !strings.HasSuffix(res.Warnings[0], "timed out after 0.3s") {
		t.Errorf("warnings %q, want a timeout after 0.3s", res.Warnings)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slow := script(t, dir, `sleep 5 & echo $! > "$MX_CLAW_PROJECT_DIR/child.pid"; wait`)
	never := script(t, dir, `touch "$MX_CLAW_PROJECT_DIR/ran"`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res := runnerFor(t, PreToolUse, entry(slow, 0), entry(never, 0)).Run(ctx, event(PreToolUse, dir))
	if time.Since(start) > 4*time.Second || res.Ran != 1 || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "PreToolUse hooks cancelled") {
		t.Errorf("Run = %+v after %v, want the first hook killed and the rest skipped", res, time.Since(start))
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a hook ran after cancellation")
	}
	assertGone(t, filepath.Join(dir, "child.pid"))
}

func TestRunAggregates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	say := func(stdout string) map[string]any {
		return entry(script(t, dir, "cat <<'EOF'\n"+stdout+"\nEOF"), 0)
	}
	allow1 := say(`{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"a1","updatedInput":{"command":"one"},"additionalContext":"c1"}}`)
	deny := say(`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"d1"}}`)
	block := entry(script(t, dir, "echo b2 >&2; exit 2"), 0)
	ask := say(`{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"q1"}}`)
	allow2 := say(`{"decision":"approve","reason":"a2","hookSpecificOutput":{"updatedInput":{"command":"two"},"additionalContext":"c2"}}`)
	halt := say(`{"continue":false,"stopReason":"s1"}`)
	fail := entry(script(t, dir, "exit 1"), 0)

	tests := []struct {
		name    string
		entries []map[string]any
		want    Result
	}{
		{"deny beats allow", []map[string]any{allow1, deny, allow2}, Result{Decision: Deny, Reason: "d1"}},
		{"block and deny reasons joined", []map[string]any{allow1, deny, ask, block, allow2}, Result{Decision: Block, Reason: "d1\nb2"}},
		{"ask beats allow", []map[string]any{allow1, ask, allow2}, Result{Decision: Ask, Reason: "q1"}},
		{"allows joined", []map[string]any{allow1, fail, allow2}, Result{Decision: Allow, Reason: "a1\na2"}},
		{"halt", []map[string]any{halt, allow2}, Result{Decision: Allow, Reason: "a2", Halt: true, StopReason: "s1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runnerFor(t, PreToolUse, tc.entries...).Run(context.Background(), event(PreToolUse, dir))
			if res.Decision != tc.want.Decision || res.Reason != tc.want.Reason || res.Halt != tc.want.Halt || res.StopReason != tc.want.StopReason || res.Ran != len(tc.entries) {
				t.Errorf("Run = %+v, want %+v", res, tc.want)
			}
		})
	}

	res := runnerFor(t, PreToolUse, allow1, fail, allow2).Run(context.Background(), event(PreToolUse, dir))
	if string(res.UpdatedInput) != `{"command":"two"}` || res.AdditionalContext != "c1\nc2" || len(res.Warnings) != 1 {
		t.Errorf("Run = %+v, want the last updatedInput, both contexts in order and one warning", res)
	}
}

func TestRunStdinHasClaudeCodeFields(t *testing.T) {
	t.Parallel()
	common := []string{"cwd", "hook_event_name", "session_id", "transcript_path"}
	tests := []struct {
		event Event
		extra []string
		want  map[string]string // key → JSON value
	}{
		{Event{Name: PreToolUse, ToolName: "run_command", ToolUseID: "call_1", ToolInput: json.RawMessage(`{"command":"go test ./... && echo <ok>","timeout":30}`)},
			[]string{"tool_input", "tool_name", "tool_use_id"},
			map[string]string{"tool_name": `"Bash"`, "tool_input": `{"command":"go test ./... && echo <ok>","timeout":30000}`, "tool_use_id": `"call_1"`}},
		{Event{Name: PostToolUse, ToolName: "write_file", ToolInput: json.RawMessage(`{"path":"a.go","content":"package a\n"}`), ToolResult: "Wrote 10 bytes to a.go (created)"},
			[]string{"tool_input", "tool_name", "tool_response"},
			map[string]string{"tool_name": `"Write"`, "tool_input": `{"content":"package a\n","file_path":"<dir>/a.go","path":"a.go"}`}},
		{Event{Name: PostToolUseFailure, ToolName: "read_file", ToolInput: json.RawMessage(`{"path":"x"}`), ToolResult: "Tool failed: no such file", ToolFailed: true},
			[]string{"tool_input", "tool_name", "error", "is_interrupt"},
			map[string]string{"tool_name": `"Read"`, "error": `"Tool failed: no such file"`, "is_interrupt": "false"}},
		{Event{Name: PermissionRequest, ToolName: "edit_file", ToolInput: json.RawMessage(`{"path":"/abs/b.go","old_string":"a","new_string":"b"}`)},
			[]string{"tool_input", "tool_name"},
			map[string]string{"tool_name": `"Edit"`, "tool_input": `{"file_path":"/abs/b.go","new_string":"b","old_string":"a","path":"/abs/b.go"}`}},
		{Event{Name: PreToolUse, ToolName: "todo_write", ToolInput: json.RawMessage(`{}`)}, []string{"tool_input", "tool_name"},
			map[string]string{"tool_name": `"TodoWrite"`, "tool_input": `{}`}},
		{Event{Name: UserPromptSubmit, Prompt: "hi", PermissionMode: "bypassPermissions"}, []string{"permission_mode", "prompt"},
			map[string]string{"prompt": `"hi"`, "permission_mode": `"bypassPermissions"`}},
		{Event{Name: SessionStart, Source: "resume", Model: "fake/m"}, []string{"source", "model"},
			map[string]string{"source": `"resume"`, "model": `"fake/m"`}},
		{Event{Name: Stop, StopHookActive: true, LastAssistantMessage: "done"}, []string{"stop_hook_active", "last_assistant_message"},
			map[string]string{"stop_hook_active": "true", "last_assistant_message": `"done"`}},
		{Event{Name: PreCompact, Trigger: "manual", CustomInstructions: "keep the plan"}, []string{"custom_instructions", "trigger"},
			map[string]string{"trigger": `"manual"`, "custom_instructions": `"keep the plan"`}},
		{Event{Name: PostCompact, Trigger: "auto", CompactSummary: "S"}, []string{"compact_summary", "trigger"},
			map[string]string{"trigger": `"auto"`, "compact_summary": `"S"`}},
		{Event{Name: Notification, Message: "mx-claw needs your permission to use Bash", NotificationType: "permission_prompt", Title: "Permission needed"},
			[]string{"message", "notification_type", "title"},
			map[string]string{"notification_type": `"permission_prompt"`}},
		{Event{Name: SessionEnd, Reason: "other"}, []string{"reason"}, map[string]string{"reason": `"other"`}},
	}
	for _, tc := range tests {
		t.Run(string(tc.event.Name)+"/"+tc.event.ToolName, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := script(t, dir, `cat > "$CLAUDE_PROJECT_DIR/stdin.json"`)
			ev := tc.event
			ev.SessionID, ev.Cwd = "sess-42", dir
			res := runnerFor(t, ev.Name, entry(cmd, 0)).Run(context.Background(), ev)
			if res.Ran != 1 || len(res.Warnings) != 0 {
				t.Fatalf("Run = %+v", res)
			}
			data, err := os.ReadFile(filepath.Join(dir, "stdin.json"))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("stdin %s: %v", data, err)
			}
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := append(slices.Clone(common), tc.extra...)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("stdin keys %v, want %v (%s)", keys, want, data)
			}
			check := func(key, want string) {
				t.Helper()
				if v := got[key]; string(v) != want {
					t.Errorf("%s = %s, want %s", key, v, want)
				}
			}
			check("session_id", `"sess-42"`)
			check("cwd", strconv.Quote(dir))
			check("transcript_path", `""`)
			check("hook_event_name", strconv.Quote(string(ev.Name)))
			for k, v := range tc.want {
				check(k, strings.ReplaceAll(v, "<dir>", dir))
			}
		})
	}
}

func TestRunPostToolUseGetsToolResponse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A typical hook reads the response with jq-like tools; here plain
	// shell pattern matching on Claude Code's Bash shape.
	cmd := script(t, dir, `in=$(cat); case "$in" in *'"stdout":"FAIL: TestX"'*) echo '{"decision":"block","reason":"the tests failed"}';; esac`)
	ev := event(PostToolUse, dir)
	ev.ToolResult = "FAIL: TestX\n[exit code 0, 0.3s]"
	res := runnerFor(t, PostToolUse, entry(cmd, 0)).Run(context.Background(), ev)
	if res.Decision != Block || res.Reason != "the tests failed" {
		t.Errorf("Run = %+v, want the hook to see tool_response.stdout and block", res)
	}
}

// TestRunEnvironmentHasNoSecrets cannot be parallel: it sets environment
// variables with t.Setenv.
func TestRunEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-hooks-test-secret")
	t.Setenv("MX_CLAW_API_KEY", "mx-hooks-test-secret")
	t.Setenv("GITHUB_TOKEN", "gh-hooks-test-secret")
	t.Setenv("TZ", "UTC")
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "env.txt")
	cmd := script(t, dir, `env > `+shellQuote(out)+`; echo "PWD_IS=$(pwd -P)" >> `+shellQuote(out))
	res := runnerFor(t, SessionStart, entry(cmd, 0)).Run(context.Background(), event(SessionStart, dir))
	if res.Ran != 1 || len(res.Warnings) != 0 {
		t.Fatalf("Run = %+v", res)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := string(data)
	if strings.Contains(env, "hooks-test-secret") {
		t.Errorf("a hook received a secret:\n%s", env)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TZ=UTC\n", "PATH=", "MX_CLAW_PROJECT_DIR=" + dir + "\n", "CLAUDE_PROJECT_DIR=" + dir + "\n", "PWD_IS=" + real + "\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("hook environment lacks %q:\n%s", want, env)
		}
	}
}

func TestRunWithoutHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var nilRunner *Runner
	for name, r := range map[string]*Runner{
		"nil runner":    nilRunner,
		"nil config":    {},
		"other event":   runnerFor(t, PostToolUse, entry("exit 2", 0)),
		"other tool":    {Config: mustParse(t, `{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"exit 2"}]}]}`)},
		"unknown event": runnerFor(t, PreToolUse, entry("exit 2", 0)),
	} {
		ev := event(PreToolUse, dir)
		if name == "unknown event" {
			ev.Name = "Teleport"
		}
		if res := r.Run(context.Background(), ev); !equalResults(res, Result{}) {
			t.Errorf("%s: Run = %+v, want nothing", name, res)
		}
	}
}

func mustParse(t *testing.T, raw string) *Config {
	t.Helper()
	c, err := ParseConfig(json.RawMessage(raw), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func assertGone(t *testing.T, pidFile string) { testutil.AssertGone(t, pidFile) }
