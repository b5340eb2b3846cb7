package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// gitInit makes the workspace a repository on branch, with one commit.
func (e *env) gitInit(branch string) {
	e.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		e.t.Skip("git is not installed: the workspace cannot be a repository")
	}
	e.writeWS("main.go", "package main\n")
	for _, args := range [][]string{{"init", "-q", "-b", branch}, {"add", "."}, {"commit", "-q", "-m", "first"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = e.ws
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			e.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// environmentNotes returns the notes of a request and whether the last one
// is right before the request's last message (the user's).
func environmentNotes(msgs []llmtest.ChatMessage) (notes []string, beforeUser bool) {
	for i, m := range msgs {
		if m.Role == "system" && strings.HasPrefix(m.Content, "<environment-update>") {
			notes = append(notes, m.Content)
			beforeUser = i == len(msgs)-2 && msgs[i+1].Role == "user"
		}
	}
	return notes, beforeUser
}

// The first request tells the model where it works; every later request
// of the session repeats the system prompt byte for byte (the provider's
// prompt cache keeps working); a mode switch or a model switch between
// turns comes as one note before the user's message.
func TestSystemPromptCarriesEnvironmentAndStaysFrozen(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
		llmtest.Text("It is a Go program."),
		llmtest.Text("Still plan mode."),
		llmtest.Text("Now I may edit."),
		llmtest.Text("Another model."),
	)
	e.gitInit("feature-x")
	before := time.Now().Format("2006-01-02")
	if r := e.run("", "run", "--permission-mode", "plan", "what is this?"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	after := time.Now().Format("2006-01-02")
	if r := e.run("", "run", "--continue", "--permission-mode", "plan", "and now?"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "--permission-mode", "acceptEdits", "go ahead"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "--permission-mode", "acceptEdits", "--model", "fake/other-model", "once more"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	prompt := reqs[0].Chat.Messages[0].Content
	date := "- Date: " + before
	if !strings.Contains(prompt, date) {
		date = "- Date: " + after
	}
	for _, want := range []string{"- Workspace: " + e.ws + ".", "- System: " + runtime.GOOS + "/" + runtime.GOARCH, date,
		"on branch feature-x", "- Permission mode: plan (read-only).", "- Approvals: none (non-interactive run).",
		"- Model: you are fake/fake-model;"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the first request's system prompt lacks %q:\n%s", want, prompt)
		}
	}
	t.Logf("first request: %d bytes, system prompt %d bytes", reqs[0].Size, len(prompt))

	wantNotes := []struct {
		n    int
		line string // the new note's line; "" for none
	}{{0, ""}, {0, ""}, {0, ""}, {1, "- Permission mode: acceptEdits."}, {2, "- Model: you are fake/other-model;"}}
	for i, req := range reqs {
		if got := req.Chat.Messages[0].Content; got != prompt {
			t.Fatalf("request %d: the system prompt changed:\n%s", i, got)
		}
		notes, beforeUser := environmentNotes(req.Chat.Messages)
		if len(notes) != wantNotes[i].n {
			t.Fatalf("request %d: %d notes %q, want %d", i, len(notes), notes, wantNotes[i].n)
		}
		if wantNotes[i].line == "" {
			continue
		}
		last := notes[len(notes)-1]
		if !beforeUser || !strings.Contains(last, "\n"+wantNotes[i].line) || strings.Count(last, "\n- ") != 1 {
			t.Errorf("request %d: note %q (right before the user's message: %v), want the one line %q", i, last, beforeUser, wantNotes[i].line)
		}
	}
}

// debug prompt shows what a session sends: the same system prompt as a
// real first request in the same workspace and mode, and the same tools.
func TestDebugPromptMatchesFirstRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("hello"))
	e.writeWS("AGENTS.md", "Run make test.\n")
	r := e.run("", "debug", "prompt", "--json", "--approvals", "deny", "--permission-mode", "acceptEdits", "--cwd", e.ws)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var d struct {
		Workspace string
		Model     string
		Messages  []struct{ Role, Content string }
		Tools     []struct {
			Type     string
			Function struct{ Name string }
		}
		Parts []struct {
			Name  string
			Bytes int
		}
		Total struct{ Bytes int }
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if run := e.run("", "run", "--permission-mode", "acceptEdits", "hi"); run.code != 0 {
		t.Fatalf("exit %d: %s", run.code, run.stderr)
	}
	first := e.srv.ChatRequests()[0].Chat
	if len(d.Messages) != 2 || first.Messages[0].Content != d.Messages[0].Content || first.Messages[1].Content != d.Messages[1].Content {
		t.Errorf("debug prompt's system messages differ from the first request's:\n%q\n%q", d.Messages, first.Messages[:2])
	}
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != strings.Join(first.Tools, ",") {
		t.Errorf("tools %v, the request offered %v", names, first.Tools)
	}
	sum := 0
	for _, p := range d.Parts {
		sum += p.Bytes
	}
	if d.Workspace != e.ws || d.Model != "fake/fake-model" || sum != d.Total.Bytes || len(d.Parts) != 3+len(d.Tools) {
		t.Errorf("workspace %q, model %q, parts %+v, total %d", d.Workspace, d.Model, d.Parts, d.Total.Bytes)
	}

	text := e.run("", "debug", "prompt", "--cwd", e.ws)
	for _, want := range []string{"instructions", "environment", "AGENTS.md", fmt.Sprintf("tools (%d)", len(d.Tools)), "===== system prompt =====", "--- run_command"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("debug prompt output lacks %q:\n%s", want, text.stdout)
		}
	}
	if bad := e.run("", "debug", "prompt", "--approvals", "maybe"); bad.code != 2 {
		t.Errorf("--approvals maybe: exit %d, want 2", bad.code)
	}
}
