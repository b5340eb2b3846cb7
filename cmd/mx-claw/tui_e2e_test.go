package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// tuiPane is mx-claw's interactive UI running in a tmux pane of 80×24 on a
// private tmux server, killed when the test ends.
type tuiPane struct {
	t      *testing.T
	socket string
}

// startTUI runs `mx-claw args...` in the workspace inside tmux, or skips
// the test if tmux is missing.
func (e *env) startTUI(args ...string) *tuiPane {
	e.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		e.t.Skip("tmux is not installed (apt-get install tmux); skipping the terminal UI test")
	}
	p := &tuiPane{t: e.t, socket: fmt.Sprintf("mxc-tui-%d-%d", os.Getpid(), time.Now().UnixNano())}
	quoted := []string{"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "MX_CLAW_HOME=" + e.home,
		"LANG=C.UTF-8", "TERM=xterm-256color", "NO_COLOR=1", binPath}
	quoted = append(quoted, args...)
	for i, q := range quoted {
		quoted[i] = "'" + strings.ReplaceAll(q, "'", `'\''`) + "'"
	}
	script := "cd '" + e.ws + "' && " + strings.Join(quoted, " ")
	p.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "main", "sh", "-c", script+"; echo EXITED=$?; sleep 60")
	e.t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	p.waitFor("│ ", 20*time.Second)
	return p
}

func (p *tuiPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen returns what the pane shows, with its scrollback.
func (p *tuiPane) screen() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "main")
}

// waitFor waits until the screen contains want, failing the test with the
// screen after d.
func (p *tuiPane) waitFor(want string, d time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := p.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("screen never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// typeLine types text and presses Enter.
func (p *tuiPane) typeLine(text string) {
	p.t.Helper()
	p.tmux("send-keys", "-t", "main", "-l", text)
	time.Sleep(50 * time.Millisecond)
	p.tmux("send-keys", "-t", "main", "Enter")
}

func (p *tuiPane) keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

func TestTUIToolCardAndDiff(t *testing.T) {
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"hello","new_string":"goodbye"}`),
		llmtest.Text("Done **editing** the file."))
	e.writeWS("a.txt", "hello\nworld\n")
	p := e.startTUI("--permission-mode", "acceptEdits")
	p.typeLine("change hello to goodbye")
	s := p.waitFor("Done editing the file.", 20*time.Second)
	for _, want := range []string{"› change hello to goodbye", "✓", "-hello", "+goodbye", "first token", "fake/fake-model"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "a.txt")); string(b) != "goodbye\nworld\n" {
		t.Errorf("a.txt = %q", b)
	}
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
}

func TestTUIApprovalYesAndNo(t *testing.T) {
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch yes.txt"}`),
		llmtest.Text("made it"),
		llmtest.Call("run_command", `{"command":"touch no.txt"}`),
		llmtest.Text("understood"))
	p := e.startTUI()
	p.typeLine("make yes.txt")
	p.waitFor("[y] yes", 20*time.Second)
	if s := p.screen(); !strings.Contains(s, "$ touch yes.txt") {
		t.Errorf("approval does not show the command:\n%s", s)
	}
	p.keys("y")
	p.waitFor("made it", 20*time.Second)
	if _, err := os.Stat(filepath.Join(e.ws, "yes.txt")); err != nil {
		t.Errorf("approved command did not run: %v", err)
	}
	p.typeLine("make no.txt")
	p.waitFor("$ touch no.txt", 20*time.Second)
	p.keys("n")
	s := p.waitFor("understood", 20*time.Second)
	if !strings.Contains(s, "Denied") {
		t.Errorf("screen does not show the denial:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "no.txt")); err == nil {
		t.Error("rejected command ran")
	}
	reqs := e.srv.ChatRequests()
	if got := toolResults(reqs[len(reqs)-1]); !strings.Contains(fmt.Sprint(got), "reject") {
		t.Errorf("model was not told of the rejection: %v", got)
	}
}

func TestTUIEscCancelsThenSessionGoesOn(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "partial answer that never ends", Hang: true}, llmtest.Text("after the cancel"))
	p := e.startTUI()
	p.typeLine("say something long")
	p.waitFor("partial", 20*time.Second)
	p.keys("Escape")
	p.waitFor("Cancelled.", 20*time.Second)
	p.typeLine("again")
	p.waitFor("after the cancel", 20*time.Second)
}

func TestTUIQueuedWhileBusyIsSent(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "first answer comes slowly", ChunkDelay: 700 * time.Millisecond, Pieces: 4},
		llmtest.Text("second answer"))
	p := e.startTUI()
	p.typeLine("first")
	p.waitFor("Working", 20*time.Second)
	p.typeLine("also this")
	p.waitFor("queued: also this", 10*time.Second)
	s := p.waitFor("second answer", 30*time.Second)
	if !strings.Contains(s, "› also this") {
		t.Errorf("the queued message is not shown as sent:\n%s", s)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2", len(reqs))
	}
}

func TestTUIResumeRendersHistory(t *testing.T) {
	e := newEnv(t, llmtest.Text("General **Kenobi**"))
	r := e.run("", "run", "--json", "hello there")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	p := e.startTUI("--resume", id)
	s := p.waitFor("General Kenobi", 20*time.Second)
	if !strings.Contains(s, "› hello there") || !strings.Contains(s, id) {
		t.Errorf("history not rendered:\n%s", s)
	}
}

func TestTUIRefusesWithoutTerminal(t *testing.T) {
	e := newEnv(t)
	r := e.run("")
	if r.code != 2 || !strings.Contains(r.stderr, "mx-claw run") {
		t.Errorf("exit %d, stderr %q; want 2 and a hint to use mx-claw run", r.code, r.stderr)
	}
}

func TestTUICompact(t *testing.T) {
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY of the talk")
		}
		return llmtest.Text("plain answer")
	})
	p := e.startTUI()
	p.typeLine("/compact")
	p.waitFor("Nothing to compact yet.", 20*time.Second)
	p.typeLine("first question")
	p.waitFor("plain answer", 20*time.Second)
	p.typeLine("/compact focus on the API")
	s := p.waitFor("the model now sees a summary.", 20*time.Second)
	if !strings.Contains(s, "Compacted 2 messages") {
		t.Errorf("screen lacks the count of compacted messages:\n%s", s)
	}
	reqs := e.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	var text string
	for _, m := range last.Chat.Messages {
		text += m.Content
	}
	if len(last.Chat.Tools) != 0 || !strings.Contains(text, "focus on the API") {
		t.Errorf("the last request is not the summary request with the instructions")
	}
	p.typeLine("second question")
	p.waitFor("› second question", 20*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(p.screen(), "plain answer") < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	reqs = e.srv.ChatRequests()
	var view string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		view += m.Content + "\n"
	}
	if !strings.Contains(view, "SUMMARY of the talk") {
		t.Errorf("the request after /compact lacks the summary:\n%s", view)
	}
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
}

// TestTUIFirstAnswerLeavesNoStaleFrame prints a first answer taller than
// the screen: the live area that was showing must not stay behind in the
// scrollback, and no line of the answer may be lost.
func TestTUIFirstAnswerLeavesNoStaleFrame(t *testing.T) {
	var answer strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&answer, "answer line %02d\n\n", i)
	}
	e := newEnv(t, llmtest.Reply{Text: answer.String(), ChunkDelay: 20 * time.Millisecond, Pieces: 10})
	p := e.startTUI()
	p.typeLine("tell me a lot")
	p.waitFor("took", 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	s := p.screen()
	if n := strings.Count(s, "Ask mx-claw"); n != 1 {
		t.Errorf("the input prompt shows %d times, want once:\n%s", n, s)
	}
	for i := 1; i <= 30; i++ {
		if want := fmt.Sprintf("answer line %02d", i); strings.Count(s, want) != 1 {
			t.Errorf("%q shows %d times, want once", want, strings.Count(s, want))
		}
	}
	if t.Failed() {
		t.Logf("screen:\n%s", s)
	}
}

// TestTUIMentionAttachesFile sends a message mentioning a workspace file:
// the model's request carries the file's content.
func TestTUIMentionAttachesFile(t *testing.T) {
	e := newEnv(t, llmtest.Text("it prints a greeting"))
	e.writeWS("main.go", "package main\n\nfunc main() { println(\"mention-marker\") }\n")
	p := e.startTUI()
	p.typeLine("explain @main.go")
	s := p.waitFor("it prints a greeting", 20*time.Second)
	for _, want := range []string{"› explain @main.go", "attached: main.go (3 lines)"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "mention-marker") {
		t.Errorf("the attached content is shown on the screen:\n%s", s)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) == 0 {
		t.Fatal("no chat request")
	}
	var text string
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		text += m.Content + "\n"
	}
	if !strings.Contains(text, `<file path="main.go">`) || !strings.Contains(text, `println("mention-marker")`) {
		t.Errorf("the request lacks the file:\n%s", text)
	}
}

// TestTUIModelSwitch picks another model with /model switch: the list
// marks the current one, and the next turn uses the chosen one.
func TestTUIModelSwitch(t *testing.T) {
	e := newEnv(t, llmtest.Text("answered by the other model"))
	p := e.startTUI()
	p.typeLine("/model switch")
	s := p.waitFor("Select a fake model for this session", 20*time.Second)
	if !strings.Contains(s, "› fake-model · current") || !strings.Contains(s, "other-model") {
		t.Errorf("the list does not mark the current model:\n%s", s)
	}
	p.keys("Down")
	time.Sleep(100 * time.Millisecond)
	p.keys("Enter")
	p.waitFor("Session model: fake/other-model", 20*time.Second)
	p.typeLine("hello")
	s = p.waitFor("answered by the other model", 20*time.Second)
	if !strings.Contains(s, "fake/other-model") {
		t.Errorf("the status line does not show the new model:\n%s", s)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].Chat.Model != "other-model" {
		t.Errorf("the turn did not use the chosen model: %d requests", len(reqs))
	}

	p.typeLine("/model switch")
	p.waitFor("› other-model · current", 20*time.Second)
	p.keys("Escape")
	p.waitFor("Cancelled.", 10*time.Second)
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
}

// TestTUIHooksBlockedPromptAndSessionEnd: in the REPL, a prompt a
// UserPromptSubmit hook blocks is not kept in the input history, and
// leaving runs the SessionEnd hooks with reason prompt_input_exit.
func TestTUIHooksBlockedPromptAndSessionEnd(t *testing.T) {
	need(t, "jq")
	e := newEnv(t, llmtest.Text("trusted"), llmtest.Text("hello back"))
	e.claudeSettings(map[string]any{
		"UserPromptSubmit": on("", command(`if jq -r .prompt | grep -q password; then echo "no passwords here" >&2; exit 2; fi`)),
		"SessionEnd":       on("", command(`jq -r .reason >> "$CLAUDE_PROJECT_DIR/end.log"`)),
	})
	if r := e.run("", "run", "--trust", "trust this folder"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(e.ws, "end.log"))
	p := e.startTUI()
	p.typeLine("my password is tui-hunter2")
	p.waitFor("no passwords here", 20*time.Second)
	p.typeLine("hello")
	p.waitFor("hello back", 20*time.Second)
	p.typeLine("/exit")
	p.waitFor("EXITED=0", 20*time.Second)
	if got := e.readWS("end.log"); got != "prompt_input_exit\n" {
		t.Errorf("SessionEnd reasons = %q", got)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "history", "*"))
	for _, f := range files {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "hunter2") || !strings.Contains(string(data), "hello") {
			t.Errorf("input history %s = %q", f, data)
		}
	}
}
