package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

func (e *env) wsFile(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, name))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// runExpect runs mx-claw and fails the test unless it exits with code.
func (e *env) runExpect(code int, stdin string, args ...string) result {
	e.t.Helper()
	r := e.run(stdin, args...)
	if r.code != code {
		e.t.Fatalf("mx-claw %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, code, r.stdout, r.stderr)
	}
	return r
}

func TestUndoEditSedRmWithConflict(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed: run_command cannot run")
	}
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`),
		llmtest.Call("run_command", `{"command":"sed -i 's/beta/BETA/' b.txt"}`),
		llmtest.Call("run_command", `{"command":"rm c.txt"}`),
		llmtest.Text("done"),
	)
	e.writeWS("a.txt", "alpha\n")
	e.writeWS("b.txt", "beta\n")
	e.writeWS("c.txt", "gamma\n")
	r := e.runExpect(0, "", "run", "--yolo", "--json", "change the three files")
	var changed []string
	for _, ev := range r.events(t) {
		for _, c := range ev.Changes {
			changed = append(changed, c.Kind()+" "+c.Path)
		}
	}
	if !slices.Equal(changed, []string{"modified a.txt", "modified b.txt", "deleted c.txt"}) {
		t.Errorf("tool.completed changes = %v", changed)
	}
	id := sessionOf(t, r.events(t))
	show := e.runExpect(0, "", "sessions", "show", id).stdout
	if !strings.Contains(show, "1 file changed: deleted c.txt") {
		t.Errorf("sessions show does not say what the command changed:\n%s", show)
	}
	// The user edits b.txt after the turn: undo restores the others and
	// leaves b.txt alone.
	e.writeWS("b.txt", "BETA and my own line\n")
	r = e.runExpect(1, "", "undo")
	for _, want := range []string{"Restored:\n  a.txt\n  c.txt", "left as they are:\n  b.txt", "--conflicts merge", "Not covered: files git ignores"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("undo output lacks %q:\n%s", want, r.stdout)
		}
	}
	if e.wsFile("a.txt") != "alpha\n" || e.wsFile("c.txt") != "gamma\n" || e.wsFile("b.txt") != "BETA and my own line\n" {
		t.Errorf("after undo: a=%q b=%q c=%q", e.wsFile("a.txt"), e.wsFile("b.txt"), e.wsFile("c.txt"))
	}
	r = e.runExpect(0, "", "undo", "--session", id, "--conflicts", "keep")
	if !strings.Contains(r.stdout, "Kept as you changed them:\n  b.txt") {
		t.Errorf("undo --conflicts keep:\n%s", r.stdout)
	}
	if r = e.runExpect(0, "", "undo"); !strings.Contains(r.stdout, "Nothing to undo") {
		t.Errorf("third undo: %s", r.stdout)
	}
	e.runExpect(2, "", "undo", "--conflicts", "shrug")
	e.runExpect(2, "", "undo", "--session", "nope")
}

// userSeqs returns the Seq of a session's user messages.
func (e *env) userSeqs(id string) []int64 {
	var out []int64
	for _, m := range e.show(id).Messages {
		if m.Role == protocol.RoleUser {
			out = append(out, m.Seq)
		}
	}
	return out
}

func TestRewindAndFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("write_file", `{"path":"one.txt","content":"1"}`), llmtest.Text("wrote one"),
		llmtest.Call("write_file", `{"path":"two.txt","content":"2"}`), llmtest.Text("wrote two"),
		llmtest.Call("write_file", `{"path":"three.txt","content":"3"}`), llmtest.Text("wrote three"),
	)
	r := e.runExpect(0, "", "run", "--yolo", "--json", "message one")
	id := sessionOf(t, r.events(t))
	e.runExpect(0, "", "run", "--yolo", "--continue", "message two")
	e.runExpect(0, "", "run", "--yolo", "--continue", "message three")
	seqs := e.userSeqs(id)
	if len(seqs) != 3 {
		t.Fatalf("user messages at %v", seqs)
	}
	list := e.runExpect(0, "", "rewind", "--session", id).stdout
	line := regexp.MustCompile(`(?m)^\s+` + strconv.FormatInt(seqs[1], 10) + `\s+message two\n\s+1 file changed: created two.txt$`)
	if !line.MatchString(list) {
		t.Errorf("timeline:\n%s", list)
	}
	out := e.runExpect(0, "", "rewind", "--session", id, "--to", strconv.FormatInt(seqs[1], 10)).stdout
	if !strings.Contains(out, "Restored:\n  three.txt\n  two.txt") {
		t.Errorf("rewind:\n%s", out)
	}
	if e.wsFile("one.txt") != "1" || e.wsFile("two.txt") != "<missing>" || e.wsFile("three.txt") != "<missing>" {
		t.Errorf("files after rewind: %q %q %q", e.wsFile("one.txt"), e.wsFile("two.txt"), e.wsFile("three.txt"))
	}
	e.srv.Enqueue(llmtest.Text("second try"))
	e.runExpect(0, "", "run", "--continue", "message two, again")
	reqs := e.srv.ChatRequests()
	var users []string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if !slices.Equal(users, []string{"message one", "message two, again"}) {
		t.Errorf("after the rewind the model got %v", users)
	}
	if show := e.runExpect(0, "", "sessions", "show", id).stdout; !strings.Contains(show, "taken back by a rewind") {
		t.Errorf("sessions show does not mark rewound messages:\n%s", show)
	}
	e.runExpect(2, "", "rewind", "--session", id, "--to", strconv.FormatInt(seqs[2], 10))

	// Fork before the reworded second message (the first one is no longer
	// in the conversation).
	now := e.userSeqs(id)
	out = e.runExpect(0, "", "sessions", "fork", id, "--at", strconv.FormatInt(now[len(now)-1], 10)).stdout
	m := regexp.MustCompile(`into ([0-9a-f]{16})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("fork: %s", out)
	}
	fork := e.show(m[1])
	var forkUsers []string
	for _, fm := range fork.Messages {
		if fm.Role == protocol.RoleUser {
			forkUsers = append(forkUsers, fm.Content)
		}
	}
	if fork.Session.ParentID != id || !slices.Equal(forkUsers, []string{"message one"}) {
		t.Errorf("fork = %+v, user messages %v", fork.Session, forkUsers)
	}
	e.srv.Enqueue(llmtest.Text("forked answer"))
	e.runExpect(0, "", "run", "--session", m[1], "a different second message")
	reqs = e.srv.ChatRequests()
	checkPairs(t, len(reqs)-1, reqs[len(reqs)-1].Chat.Messages)
}

func TestSearchExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"notes.txt"}`),
		llmtest.Text("The notes mention a quokka."),
	)
	e.writeWS("notes.txt", "the zebra-striped quokka sleeps\n")
	r := e.runExpect(0, "", "run", "--yolo", "--json", "summarise notes.txt; my key is sk-test-0123456789abcdefghij")
	id := sessionOf(t, r.events(t))
	var hits []protocol.SearchHit
	for _, q := range []string{"quokka sleeps", "summarise"} {
		out := e.runExpect(0, "", "sessions", "search", q, "--json").stdout
		if err := json.Unmarshal([]byte(out), &hits); err != nil || len(hits) == 0 || hits[0].SessionID != id {
			t.Errorf("search %q: %v %s", q, err, out)
		}
	}
	if out := e.runExpect(0, "", "sessions", "search", "quokka", "--workspace", e.home).stdout; !strings.Contains(out, "No matches.") {
		t.Errorf("search in another workspace: %s", out)
	}
	if out := e.runExpect(0, "", "sessions", "search", "sleeps").stdout; !strings.Contains(out, "**sleeps**") || !strings.Contains(out, id) {
		t.Errorf("search text output:\n%s", out)
	}

	file := filepath.Join(e.home, "export.jsonl")
	e.runExpect(0, "", "sessions", "export", id, "-o", file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-test-0123456789abcdefghij") {
		t.Error("the export holds the key")
	}
	md := e.runExpect(0, "", "sessions", "export", id, "--format", "markdown").stdout
	if !strings.Contains(md, "## User (#") || strings.Contains(md, "sk-test-0123456789") {
		t.Errorf("markdown export:\n%s", md)
	}
	out := e.runExpect(0, "", "import", "mx-claw", file).stdout
	m := regexp.MustCompile(`imported\s+([0-9a-f]{16})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("import: %s", out)
	}
	if out := e.runExpect(0, "", "import", "mx-claw", file).stdout; !strings.Contains(out, "imported before") || strings.Contains(out, "\nimported ") {
		t.Errorf("second import: %s", out)
	}
	orig, copied := e.show(id).Messages, e.show(m[1]).Messages
	if len(orig) != len(copied) {
		t.Fatalf("%d messages imported, %d exported", len(copied), len(orig))
	}
	for i := range orig {
		a, b := orig[i], copied[i]
		if a.Role != b.Role || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
			t.Errorf("message %d: %+v became %+v", i, a, b)
		}
		if !strings.Contains(a.Content, "sk-test") && a.Content != b.Content {
			t.Errorf("message %d content %q became %q", i, a.Content, b.Content)
		}
	}
}

func TestImportOtherAgentsAndResume(t *testing.T) {
	t.Parallel()
	fixtures, err := filepath.Abs("../../internal/sessionio/testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		source, path string
		sessions     int
	}{
		{"claude", "claude", 1},
		{"codex", "codex", 2},
		{"opencode", "opencode", 1},
		{"gemini", "gemini", 3},
	} {
		t.Run(c.source, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmtest.Text("continuing"))
			out := e.runExpect(0, "", "import", c.source, filepath.Join(fixtures, c.path), "--json").stdout
			var outcomes []struct {
				SessionID string
				Skipped   string
				Messages  int
				Notes     int
			}
			if err := json.Unmarshal([]byte(out), &outcomes); err != nil || len(outcomes) != c.sessions {
				t.Fatalf("import: %v\n%s", err, out)
			}
			id := ""
			for _, o := range outcomes {
				if o.Skipped != "" || o.SessionID == "" || o.Messages == 0 {
					t.Errorf("outcome %+v", o)
				}
				id = o.SessionID
			}
			again := e.runExpect(0, "", "import", c.source, filepath.Join(fixtures, c.path)).stdout
			if strings.Count(again, "imported before") != c.sessions {
				t.Errorf("re-import:\n%s", again)
			}
			// The imported session continues with the configured model, in a
			// valid request.
			e.runExpect(0, "", "run", "--session", id, "go on")
			reqs := e.srv.ChatRequests()
			last := reqs[len(reqs)-1]
			checkPairs(t, len(reqs)-1, last.Chat.Messages)
			if n := len(last.Chat.Messages); n < 3 || last.Chat.Messages[n-1].Content != "go on" {
				t.Errorf("request: %+v", last.Chat.Messages)
			}
			if last.Chat.Model != "fake-model" {
				t.Errorf("model %q", last.Chat.Model)
			}
		})
	}
	e := newEnv(t)
	e.runExpect(2, "", "import", "cursor")
	e.runExpect(1, "", "import", "claude", filepath.Join(e.home, "nothing-here"))
}

func TestRmAndPrune(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"), llmtest.Reply{Text: "slow", Hang: true})
	first := sessionOf(t, e.runExpect(0, "", "run", "--json", "first").events(t))
	second := sessionOf(t, e.runExpect(0, "", "run", "--json", "second").events(t))
	out := e.runExpect(0, "", "sessions", "rm", first).stdout
	if !strings.Contains(out, "Deleted "+first) {
		t.Errorf("rm: %s", out)
	}
	if r := e.run("", "sessions", "show", first); r.code != 2 {
		t.Errorf("show of a deleted session: exit %d", r.code)
	}
	if out := e.runExpect(0, "", "sessions", "search", "first").stdout; !strings.Contains(out, "No matches.") {
		t.Errorf("a deleted session is still found:\n%s", out)
	}
	// A session a turn runs on is refused.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, ch, _ := e.startJSON(ctx, "--session", second, "hang")
	waitFor(t, ch, protocol.EventMessageDelta)
	r := e.runExpect(1, "", "sessions", "rm", second)
	if !strings.Contains(r.stderr, "in use") {
		t.Errorf("rm of a session in use: %s", r.stderr)
	}
	if r := e.runExpect(1, "", "sessions", "prune", "--older-than", "1ms"); !strings.Contains(r.stdout, "Deleted 0 sessions") {
		t.Errorf("prune with the session in use: %s %s", r.stdout, r.stderr)
	}
	cmd.Process.Signal(os.Interrupt)
	for range ch {
	}
	cmd.Wait()
	if r := e.runExpect(0, "", "sessions", "prune", "--older-than", "30d", "--dry-run"); !strings.Contains(r.stdout, "No session older than 30d") {
		t.Errorf("prune 30d: %s", r.stdout)
	}
	if r := e.runExpect(0, "", "sessions", "prune", "--older-than", "1ms"); !strings.Contains(r.stdout, "Deleted 1 sessions") {
		t.Errorf("prune: %s", r.stdout)
	}
	e.runExpect(2, "", "sessions", "prune", "--older-than", "soon")
}

func TestTUIRewindMenuAndUndo(t *testing.T) {
	e := newEnv(t,
		llmtest.Call("write_file", `{"path":"a.txt","content":"A"}`), llmtest.Text("Wrote a."),
		llmtest.Call("write_file", `{"path":"b.txt","content":"B"}`), llmtest.Text("Wrote b."),
	)
	p := e.startTUI("--permission-mode", "acceptEdits")
	p.typeLine("make a")
	p.waitFor("Wrote a.", 20*time.Second)
	p.typeLine("make b")
	p.waitFor("Wrote b.", 20*time.Second)
	if s := p.screen(); !strings.Contains(s, "1 file changed (1 created): b.txt") {
		t.Errorf("the tool card does not say what changed:\n%s", s)
	}
	p.typeLine("/rewind")
	s := p.waitFor("Go back to before which message?", 10*time.Second)
	if !strings.Contains(s, "make b  · 1 file changed (1 created)") {
		t.Errorf("menu:\n%s", s)
	}
	p.keys("Enter")
	p.waitFor("What to take back?", 10*time.Second)
	p.keys("Enter")
	s = p.waitFor("Conversation taken back to before message", 10*time.Second)
	if !strings.Contains(s, "It was: make b") {
		t.Errorf("after the rewind:\n%s", s)
	}
	if e.wsFile("b.txt") != "<missing>" || e.wsFile("a.txt") != "A" {
		t.Errorf("files: a=%q b=%q", e.wsFile("a.txt"), e.wsFile("b.txt"))
	}
	p.typeLine("/undo")
	p.waitFor("Undid the file changes of the last turn.", 10*time.Second)
	if e.wsFile("a.txt") != "<missing>" {
		t.Errorf("a.txt after /undo = %q", e.wsFile("a.txt"))
	}
	p.typeLine("/sessions wrote")
	p.waitFor("Sessions matching", 10*time.Second)
	p.keys("Escape")
	p.waitFor("Cancelled.", 10*time.Second)
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
}
