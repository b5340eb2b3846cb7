package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestRunExploreSubagentsAndSessionTree(t *testing.T) {
	t.Parallel()
	task := func(q string) llmtest.ToolCall {
		args, _ := json.Marshal(map[string]any{"description": "find " + q, "prompt": "Find " + q + " and report the file.", "subagent_type": "explore"})
		return llmtest.ToolCall{Name: "task", Arguments: string(args)}
	}
	// The three subagents each take one reply, in whatever order they ask.
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{task("the parser"), task("the lexer"), task("the printer")}},
		llmtest.Text("It is in a.go."), llmtest.Text("It is in a.go."), llmtest.Text("It is in a.go."),
		llmtest.Text("All three are in a.go."),
	)
	e.writeWS("a.go", "package a\n")
	r := e.run("", "run", "--json", "where are the parser, the lexer and the printer?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	evs := r.events(t)
	id := ""
	children := map[string]bool{}
	for _, ev := range evs {
		if ev.ParentSessionID == "" {
			id = ev.SessionID
		} else {
			children[ev.SessionID] = true
		}
	}
	if len(children) != 3 {
		t.Fatalf("events of %d subagents, want 3", len(children))
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	results := toolResults(last)
	if len(results) != 3 {
		t.Fatalf("the parent got %d task results", len(results))
	}
	for _, res := range results {
		if !strings.HasPrefix(res, "It is in a.go.") || !strings.Contains(res, "[explore subagent, session ") {
			t.Errorf("task result %q", res)
		}
	}
	out := e.run("", "sessions", "show", id)
	if out.code != 0 || !strings.Contains(out.stdout, "Subagents") || strings.Count(out.stdout, " explore · idle ·") != 3 {
		t.Errorf("sessions show: exit %d\n%s", out.code, out.stdout)
	}
	var dump struct {
		Subagents []struct {
			Session protocol.Session `json:"session"`
		} `json:"subagents"`
	}
	js := e.run("", "sessions", "show", id, "--json")
	if err := json.Unmarshal([]byte(js.stdout), &dump); err != nil || len(dump.Subagents) != 3 || dump.Subagents[0].Session.ParentID != id {
		t.Errorf("sessions show --json subagents: %v %+v", err, dump.Subagents)
	}
	child := dump.Subagents[0].Session.ID
	if out := e.run("", "sessions", "show", child); !strings.Contains(out.stdout, "Parent    "+id) {
		t.Errorf("a subagent's session does not name its parent:\n%s", out.stdout)
	}
	list := e.run("", "sessions", "list")
	if strings.Contains(list.stdout, child) || !strings.Contains(list.stdout, id) {
		t.Errorf("sessions list shows subagents:\n%s", list.stdout)
	}
}

// TestRunEditGetsGoplsDiagnostics edits a Go file through mx-claw with a
// real gopls: the edit that breaks the build gets the compiler's error in
// its result, the fix says it is gone.
func TestRunEditGetsGoplsDiagnostics(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH; gopls needs it")
	}
	gopls, err := exec.LookPath("gopls")
	if err != nil {
		// Where `make test-deps` installs it.
		gopath, _ := exec.Command(goBin, "env", "GOPATH").Output()
		gopls = filepath.Join(strings.TrimSpace(string(gopath)), "bin", "gopls")
		if _, err := os.Stat(gopls); err != nil {
			t.Skip("gopls is not installed (make test-deps installs it); skipping the language-server end-to-end test")
		}
	}
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"fmt.Println(\"hello\")","new_string":"fmt.Println(greeting)"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"func main() {","new_string":"const greeting = \"hi\"\n\nfunc main() {"}`),
		llmtest.Text("Done."),
	)
	e.writeWS("go.mod", "module demo\n\ngo 1.21\n")
	e.writeWS("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n")
	cmd := e.command(context.Background(), "run", "--yolo", "use a constant greeting")
	gocache, _ := exec.Command(goBin, "env", "GOCACHE").Output()
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(gopls)+":"+filepath.Dir(goBin)+":"+os.Getenv("PATH"),
		"GOCACHE="+strings.TrimSpace(string(gocache)), "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests\n%s", len(reqs), out)
	}
	lastTool := func(r llmtest.Request) string { m := r.Chat.Messages; return m[len(m)-1].Content }
	if got := lastTool(reqs[2]); !strings.Contains(got, "gopls reports new errors in main.go after this change:") ||
		!strings.Contains(got, "main.go:6:14: undefined: greeting") {
		t.Errorf("the breaking edit's result lacks the compiler's error:\n%s", got)
	}
	if got := lastTool(reqs[3]); !strings.Contains(got, "gopls reports no errors in main.go now.") || strings.Contains(got, "new errors") {
		t.Errorf("the fix's result:\n%s", got)
	}
}
