package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// asJSON marshals v for comparisons.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestViews(t *testing.T) {
	t.Parallel()
	const cwd = "/ws"
	tests := []struct {
		name, tool, args string
		want             []string // "Name <tool_input JSON>" per view
	}{
		{"bash", "run_command", `{"command":"go test","timeout":30,"workdir":"sub"}`,
			[]string{`Bash {"command":"go test","timeout":30000,"workdir":"sub"}`}},
		{"read", "read_file", `{"path":"a.go","offset":3}`,
			[]string{`Read {"file_path":"/ws/a.go","offset":3,"path":"a.go"}`}},
		{"write absolute", "write_file", `{"path":"/ws/x/../b.txt","content":"c"}`,
			[]string{`Write {"content":"c","file_path":"/ws/b.txt","path":"/ws/x/../b.txt"}`}},
		{"edit", "edit_file", `{"path":"c.go","old_string":"a","new_string":"b","replace_all":true}`,
			[]string{`Edit {"file_path":"/ws/c.go","new_string":"b","old_string":"a","path":"c.go","replace_all":true}`}},
		{"grep", "grep", `{"pattern":"TODO","include":"*.go","case_insensitive":true}`,
			[]string{`Grep {"-i":true,"case_insensitive":true,"glob":"*.go","include":"*.go","output_mode":"content","pattern":"TODO"}`}},
		{"ls", "list_dir", `{}`, []string{`LS {"path":"/ws"}`}},
		{"mx-claw only", "search_history", `{"query":"x"}`, []string{`search_history {"query":"x"}`}},
		{"patch add", "apply_patch", `{"patch":"*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch"}`,
			[]string{`Write {"content":"hi\n","file_path":"/ws/n.txt","operation":"add","path":"n.txt"}`}},
		{"patch one hunk", "apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** End Patch"}`,
			[]string{`Edit {"file_path":"/ws/a.go","new_string":"y","old_string":"x","operation":"update","path":"a.go","replace_all":false}`}},
		{"patch two hunks, two ops on one file", "apply_patch",
			`{"patch":"*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** Update File: a.go\n@@\n-p\n+q\n*** Delete File: old.txt\n*** End Patch"}`,
			[]string{
				`MultiEdit {"edits":[{"new_string":"y","old_string":"x","replace_all":false},{"new_string":"q","old_string":"p","replace_all":false}],"file_path":"/ws/a.go","operation":"update","path":"a.go"}`,
				`Write {"content":"","file_path":"/ws/old.txt","operation":"delete","path":"old.txt"}`,
			}},
		{"not a patch", "apply_patch", `{"patch":"nonsense"}`, []string{`apply_patch {"patch":"nonsense"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			vs := views(cwd, tc.tool, json.RawMessage(tc.args))
			var got []string
			for _, v := range vs {
				got = append(got, v.name+" "+asJSON(t, v.input))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("views =\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(tc.want, "\n "))
			}
		})
	}
}

func TestViewOfAMove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"patch": "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.env\n@@\n one\n-two\n+TWO\n*** End Patch"})
	vs := views(dir, "apply_patch", args)
	if len(vs) != 2 || vs[0].name != "Edit" || vs[0].file != filepath.Join(dir, "a.txt") || vs[1].name != "Write" ||
		vs[1].input["file_path"] != filepath.Join(dir, "b.env") || vs[1].input["content"] != "one\nTWO\n" {
		t.Errorf("views of a move = %+v", vs)
	}
}

func TestFromClaude(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, updated, want string
		ok                  bool
	}{
		{"write_file", `{"file_path":"/ws/safe.txt","content":"x","path":"old.txt"}`, `{"content":"x","path":"/ws/safe.txt"}`, true},
		{"write_file", `{"path":"rel.txt","content":"x"}`, `{"content":"x","path":"rel.txt"}`, true},
		{"run_command", `{"command":"ls","description":"list","timeout":120000,"run_in_background":false}`, `{"command":"ls","timeout":120}`, true},
		{"run_command", `{"command":"ls","timeout":900000}`, `{"command":"ls","timeout":600}`, true},
		{"grep", `{"pattern":"x","glob":"*.md","-i":true,"output_mode":"content"}`, `{"case_insensitive":true,"include":"*.md","pattern":"x"}`, true},
		{"mcp__db__query", `{"sql":"select 1"}`, `{"sql":"select 1"}`, true},
		{"apply_patch", `{"file_path":"x"}`, ``, false},
	}
	for _, tc := range tests {
		got, ok := fromClaude(tc.tool, json.RawMessage(tc.updated))
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("fromClaude(%s, %s) = %s, %v; want %s, %v", tc.tool, tc.updated, got, ok, tc.want, tc.ok)
		}
	}
}

func TestResponseShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	editArgs := json.RawMessage(`{"path":"a.txt","old_string":"two","new_string":"TWO"}`)
	snap := takeSnapshot(views(dir, "edit_file", editArgs))
	if err := os.WriteFile(file, []byte("one\nTWO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	respOf := func(ev Event) string {
		ev.Cwd = dir
		vs := views(dir, ev.ToolName, ev.ToolInput)
		return asJSON(t, ev.response(vs[0]))
	}
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"bash", Event{ToolName: "run_command", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolResult: "a\nb\n[exit code 0, 0.0s]"},
			`{"content":"a\nb\n[exit code 0, 0.0s]","interrupted":false,"isError":false,"isImage":false,"stderr":"","stdout":"a\nb"}`},
		{"bash timed out", Event{ToolName: "run_command", ToolInput: json.RawMessage(`{"command":"sleep 9"}`), ToolResult: "[command timed out after 1s and was killed]", ToolFailed: true},
			`{"content":"[command timed out after 1s and was killed]","interrupted":true,"isError":true,"isImage":false,"stderr":"","stdout":""}`},
		{"write create", Event{ToolName: "write_file", ToolInput: json.RawMessage(`{"path":"new.txt","content":"hi"}`), ToolResult: "Wrote 2 bytes", Before: &Snapshot{files: map[string]fileState{}}},
			`{"content":"hi","filePath":"` + filepath.Join(dir, "new.txt") + `","isError":false,"originalFile":null,"result":"Wrote 2 bytes","structuredPatch":[],"type":"create"}`},
		{"edit", Event{ToolName: "edit_file", ToolInput: editArgs, ToolResult: "Edited", Before: snap},
			`{"content":"Edited","filePath":"` + file + `","isError":false,"newString":"TWO","oldString":"two","originalFile":"one\ntwo\n","replaceAll":false,` +
				`"structuredPatch":[{"lines":[" one","-two","+TWO"],"newLines":2,"newStart":1,"oldLines":2,"oldStart":1}],"userModified":false}`},
		{"edit without snapshot", Event{ToolName: "edit_file", ToolInput: editArgs, ToolResult: "Edited"},
			`{"content":"Edited","filePath":"` + file + `","isError":false,"newString":"TWO","oldString":"two","originalFile":null,"replaceAll":false,"structuredPatch":[],"userModified":false}`},
		{"glob", Event{ToolName: "glob", ToolInput: json.RawMessage(`{"pattern":"*.go"}`), ToolResult: "a.go\nb.go\n"},
			`{"content":"a.go\nb.go\n","durationMs":0,"filenames":["` + filepath.Join(dir, "a.go") + `","` + filepath.Join(dir, "b.go") + `"],"isError":false,"numFiles":2,"truncated":false}`},
	}
	for _, tc := range tests {
		if got := respOf(tc.ev); got != tc.want {
			t.Errorf("%s: tool_response\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// A Write over an existing file is an update with the old content.
	ev := Event{ToolName: "write_file", ToolInput: json.RawMessage(`{"path":"a.txt","content":"one\nTWO\n"}`), Before: snap}
	var w map[string]any
	json.Unmarshal([]byte(respOf(ev)), &w)
	if w["type"] != "update" || w["originalFile"] != "one\ntwo\n" {
		t.Errorf("write over a file: %v", w)
	}
}

func TestRunSnapshotOnlyWhenPostHooksMatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644)
	ev := Event{ToolName: "write_file", ToolInput: json.RawMessage(`{"path":"a.txt","content":"y"}`), Cwd: dir}
	if s := runnerFor(t, PreToolUse, entry("true", 0)).Snapshot(ev); s != nil {
		t.Error("Snapshot read files although no PostToolUse hook would get them")
	}
	s := runnerFor(t, PostToolUse, entry("true", 0)).Snapshot(ev)
	if st, ok := s.before(filepath.Join(dir, "a.txt")); !ok || !st.exists || st.content != "x" {
		t.Errorf("Snapshot = %+v", s)
	}
}

func TestRunApplyPatchPerFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The guard blocks .env files and logs what it saw.
	cmd := script(t, dir, `in=$(cat); echo "$in" >> "$CLAUDE_PROJECT_DIR/seen.jsonl"; case "$in" in *'.env"'*) echo "no env files" >&2; exit 2;; esac`)
	c := mustParse(t, `{"PreToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":`+asJSON(t, cmd)+`}]}]}`)
	patch := "*** Begin Patch\n*** Add File: ok.txt\n+a\n*** Add File: conf/x.env\n+b\n*** End Patch"
	ev := Event{Name: PreToolUse, SessionID: "s", Cwd: dir, ToolName: "apply_patch", ToolUseID: "call_9", ToolInput: json.RawMessage(asJSON(t, map[string]string{"patch": patch}))}
	res := (&Runner{Config: c}).Run(context.Background(), ev)
	if res.Decision != Block || res.Reason != "no env files" || res.Ran != 2 {
		t.Errorf("Run = %+v, want the .env file's block (2 hooks run)", res)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "seen.jsonl"))
	for _, want := range []string{`"tool_name":"Write","tool_input":{"content":"a\n","file_path":"` + filepath.Join(dir, "ok.txt"),
		`"file_path":"` + filepath.Join(dir, "conf/x.env") + `"`, `"tool_use_id":"call_9"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("hook inputs lack %s:\n%s", want, data)
		}
	}
}

func TestRunAsync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	slow := map[string]any{"type": "command", "command": "sleep 1; touch " + shellQuote(done) + "; echo oops >&2; exit 1", "async": true}
	block := map[string]any{"type": "command", "command": "echo '{\"decision\":\"block\",\"reason\":\"late\"}'", "async": true}
	r := runnerFor(t, PreToolUse, slow, block)
	start := time.Now()
	res := r.Run(context.Background(), event(PreToolUse, dir))
	if time.Since(start) > 700*time.Millisecond || res.Ran != 2 || res.Decision != None || len(res.Warnings) != 0 {
		t.Fatalf("Run = %+v after %s; want it back at once, deciding nothing", res, time.Since(start))
	}
	if _, err := os.Stat(done); err == nil {
		t.Fatal("the async hook ended before Run returned?")
	}
	warnings := strings.Join(r.Wait(context.Background()), "\n")
	if _, err := os.Stat(done); err != nil {
		t.Error("Wait returned before the async hook ended")
	}
	if !strings.Contains(warnings, "exited with status 1: oops") || !strings.Contains(warnings, `async hook "echo`) || !strings.Contains(warnings, "late") {
		t.Errorf("Wait warnings = %q", warnings)
	}
	// Cancelling Wait kills what is still running.
	pid := filepath.Join(dir, "pid")
	r = runnerFor(t, Stop, map[string]any{"type": "command", "command": "echo $$ > " + shellQuote(pid) + "; exec sleep 30", "async": true})
	r.Run(context.Background(), event(Stop, dir))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	r.Wait(ctx)
	if time.Since(start) > 5*time.Second {
		t.Errorf("Wait took %s after its context ended", time.Since(start))
	}
	assertGone(t, pid)
}

func TestRunSessionStartGetsEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "hooks")
	cmd := script(t, dir, `echo "export A=1" >> "$CLAUDE_ENV_FILE"; echo "file=$CLAUDE_ENV_FILE"`)
	r := runnerFor(t, SessionStart, entry(cmd, 0))
	r.DataDir = data
	res := r.Run(context.Background(), event(SessionStart, dir))
	want := filepath.Join(data, "s-1", "env.sh")
	if res.AdditionalContext != "file="+want || r.EnvFile("s-1") != want {
		t.Fatalf("Run = %+v; want CLAUDE_ENV_FILE %s", res, want)
	}
	if got, _ := os.ReadFile(want); string(got) != "export A=1\n" {
		t.Errorf("env file = %q", got)
	}
	// Other events do not get it.
	r2 := runnerFor(t, UserPromptSubmit, entry(`echo "file=${CLAUDE_ENV_FILE-unset}"`, 0))
	r2.DataDir = data
	if res := r2.Run(context.Background(), event(UserPromptSubmit, dir)); res.AdditionalContext != "file=unset" {
		t.Errorf("UserPromptSubmit hook got %q", res.AdditionalContext)
	}
	if got := (&Runner{DataDir: data}).EnvFile("../x"); got != filepath.Join(data, ".._x", "env.sh") {
		t.Errorf("EnvFile of a hostile id = %s", got)
	}
}

func TestTranscript(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s", "transcript.jsonl")
	msgs := []protocol.Message{
		{Seq: 1, Role: protocol.RoleSystem, Content: "you are mx-claw"},
		{Seq: 2, Role: protocol.RoleUser, Content: "list the files"},
		{Seq: 3, Role: protocol.RoleAssistant, Content: "Looking.", Model: "p/m", ToolCalls: []protocol.ToolCall{{ID: "c1", Name: "run_command", Arguments: `{"command":"ls"}`}}},
		{Seq: 4, Role: protocol.RoleTool, ToolCallID: "c1", ToolName: "run_command", Content: "a.go\n[exit code 0, 0.0s]"},
	}
	tr := NewTranscript(path, "sess-1", "/ws")
	if err := tr.Sync(msgs); err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, protocol.Message{Seq: 5, Role: protocol.RoleAssistant, Content: "One file: a.go."})
	if err := tr.Sync(msgs); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4 (no system prompt):\n%v", len(lines), lines)
	}
	var parent any
	for i, l := range lines {
		if l["sessionId"] != "sess-1" || l["cwd"] != "/ws" || l["uuid"] == "" || l["timestamp"] == "" || l["parentUuid"] != parent {
			t.Errorf("line %d: %v", i, l)
		}
		parent = l["uuid"]
	}
	want := []string{
		`{"content":"list the files","role":"user"}`,
		`{"content":[{"text":"Looking.","type":"text"},{"id":"c1","input":{"command":"ls"},"name":"Bash","type":"tool_use"}],"id":"msg_sess-1_3","model":"p/m","role":"assistant","stop_reason":"tool_use","type":"message"}`,
		`{"content":[{"content":"a.go\n[exit code 0, 0.0s]","is_error":false,"tool_use_id":"c1","type":"tool_result"}],"role":"user"}`,
		`{"content":[{"text":"One file: a.go.","type":"text"}],"id":"msg_sess-1_5","model":"","role":"assistant","stop_reason":"end_turn","type":"message"}`,
	}
	for i, w := range want {
		if got := asJSON(t, lines[i]["message"]); got != w {
			t.Errorf("line %d message\n got %s\nwant %s", i, got, w)
		}
	}
	if r, _ := lines[2]["toolUseResult"].(map[string]any); r["stdout"] != "a.go" {
		t.Errorf("toolUseResult = %v", lines[2]["toolUseResult"])
	}
	// Another process's Transcript writes the file anew from the store.
	if err := NewTranscript(path, "sess-1", "/ws").Sync(msgs[:3]); err != nil {
		t.Fatal(err)
	}
	if n := len(readLines(t, path)); n != 2 {
		t.Errorf("a new Transcript appended instead of rewriting: %d lines", n)
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestNewNoticesOncePerMachine(t *testing.T) {
	t.Parallel()
	c := mustParse(t, `{"TeammateIdle":[{"hooks":[{"type":"command","command":"x"}]}],"Stop":[{"hooks":[{"type":"command","command":"y","once":true}]}]}`)
	dir := t.TempDir()
	if n := len((&Runner{Config: c, DataDir: dir}).NewNotices()); n != 2 {
		t.Fatalf("first run: %d notices, want 2", n)
	}
	if got := (&Runner{Config: c, DataDir: dir}).NewNotices(); len(got) != 0 {
		t.Errorf("second run shows %q again", got)
	}
	if n := len((&Runner{Config: c}).NewNotices()); n != 2 {
		t.Errorf("without a DataDir: %d notices, want 2", n)
	}
}
