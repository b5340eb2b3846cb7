package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	return e.startTUIWaiting("│ ", args...)
}

// startTUIWaiting is startTUI waiting for the screen to show want.
func (e *env) startTUIWaiting(want string, args ...string) *tuiPane {
	e.t.Helper()
	return e.startTUIWith(nil, want, args...)
}

// startTUIWith is startTUIWaiting with more environment variables
// ("DISPLAY=:7").
func (e *env) startTUIWith(extraEnv []string, want string, args ...string) *tuiPane {
	e.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		e.t.Skip("tmux is not installed (apt-get install tmux); skipping the terminal UI test")
	}
	p := &tuiPane{t: e.t, socket: fmt.Sprintf("mxc-tui-%d-%d", os.Getpid(), time.Now().UnixNano())}
	quoted := []string{"env", "-i", "PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "MX_CLAW_HOME=" + e.home,
		"LANG=C.UTF-8", "TERM=xterm-256color", "NO_COLOR=1"}
	quoted = append(append(quoted, extraEnv...), binPath)
	quoted = append(quoted, args...)
	for i, q := range quoted {
		quoted[i] = "'" + strings.ReplaceAll(q, "'", `'\''`) + "'"
	}
	script := "cd '" + e.ws + "' && " + strings.Join(quoted, " ")
	p.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "main", "sh", "-c", script+"; echo EXITED=$?; sleep 60")
	e.t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	p.waitFor(want, 20*time.Second)
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

// visible returns what the pane shows now, without its scrollback.
func (p *tuiPane) visible() string {
	return p.tmux("capture-pane", "-p", "-J", "-t", "main")
}

// waitVisible waits until the visible screen (no scrollback) satisfies
// ok, failing the test with it after d.
func (p *tuiPane) waitVisible(what string, ok func(string) bool, d time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := p.visible()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %s; it shows:\n%s", what, s)
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

// killMXClaw kills mx-claw in the pane with SIGKILL, as a crash would,
// and waits until it is gone.
func (p *tuiPane) killMXClaw() {
	p.t.Helper()
	shell := strings.TrimSpace(p.tmux("list-panes", "-t", "main", "-F", "#{pane_pid}"))
	pid := 0
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(mx-claw") {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == shell {
			fmt.Sscan(s, &pid)
		}
	}
	if pid == 0 {
		p.t.Fatalf("no mx-claw process under the pane's shell %s", shell)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	p.waitFor("EXITED=", 10*time.Second)
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
	t.Parallel()
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

// TestTUIQueuedMessageBackOnEscNeverSentLater queues a message while a
// turn runs and presses Esc: the message returns to the input box. Then
// it queues another and the process dies: a later `run --continue` in
// another process does not send it, and says so.
func TestTUIQueuedMessageBackOnEscNeverSentLater(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "partial answer", Hang: true, Pieces: 1},
		llmtest.Reply{Text: "second partial", Hang: true, Pieces: 1}, llmtest.Text("the later answer"))
	p := e.startTUI()
	p.typeLine("first prompt")
	p.waitFor("partial answer", 20*time.Second)
	p.typeLine("queued text")
	p.waitFor("queued: queued text", 10*time.Second)
	p.keys("Escape")
	s := p.waitFor("Cancelled.", 20*time.Second)
	p.waitFor("│ queued text", 10*time.Second)
	if strings.Contains(p.screen(), "⏸ queued") {
		t.Errorf("still shown as queued after Esc:\n%s", s)
	}
	// Send it as it is now: a normal turn.
	p.keys("C-u")
	p.typeLine("again")
	p.waitFor("second partial", 20*time.Second)
	p.typeLine("orphan text")
	p.waitFor("queued: orphan text", 10*time.Second)
	p.killMXClaw()

	r := e.run("", "run", "--continue", "later prompt")
	if r.code != 0 {
		t.Fatalf("run --continue: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "a queued message was not sent: orphan text") {
		t.Errorf("run did not say the queued message was not sent:\n%s", r.stderr)
	}
	for i, req := range e.srv.ChatRequests() {
		for _, m := range req.Chat.Messages {
			if strings.Contains(m.Content, "queued text") || strings.Contains(m.Content, "orphan text") {
				t.Errorf("request %d sent a queued message: %q", i, m.Content)
			}
		}
	}
}

// TestTUIStepLimitContinuesWithOneKey stops a turn at maxIterations 2
// from config.json: the REPL offers to continue instead of calling it a
// failure, and c lets the model finish.
func TestTUIStepLimitContinuesWithOneKey(t *testing.T) {
	e := newEnv(t)
	cfg := strings.Replace(e.readHome("config.json"), `"version":1,`, `"version":1,"maxIterations":2,`, 1)
	e.writeHome("config.json", cfg)
	e.writeWS("f.txt", "line\n")
	n := 0
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		n++
		if n <= 2 {
			return llmtest.Call("read_file", fmt.Sprintf(`{"path":"f.txt","offset":%d}`, n))
		}
		return llmtest.Text("all done now")
	})
	p := e.startTUI()
	p.typeLine("read it twice")
	s := p.waitFor("Press c to let it continue", 20*time.Second)
	if strings.Contains(s, "Request failed") {
		t.Errorf("the step limit is shown as a failure:\n%s", s)
	}
	p.keys("c")
	p.waitFor("all done now", 20*time.Second)
	reqs := e.srv.ChatRequests()
	users := 0
	for _, m := range reqs[len(reqs)-1].Chat.Messages {
		if m.Role == "user" {
			users++
		}
	}
	if len(reqs) != 3 || users != 1 {
		t.Errorf("%d requests, the last with %d user messages; want 3 and 1", len(reqs), users)
	}
}

// TestTUIRetryAfterFailureStoresPromptOnce sends a prompt while the
// provider fails, then ↑ Enter, then /retry: the prompt is stored once.
func TestTUIRetryAfterFailureStoresPromptOnce(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Status: 400, Text: "provider down"}, llmtest.Reply{Status: 400, Text: "still down"},
		llmtest.Text("finally an answer"))
	p := e.startTUI()
	p.typeLine("explain the build")
	p.waitFor("Request failed", 20*time.Second)
	p.keys("Up")
	time.Sleep(100 * time.Millisecond)
	p.keys("Enter")
	p.waitFor("Sending the request again", 20*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(p.screen(), "Request failed") < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	p.typeLine("/retry")
	p.waitFor("finally an answer", 20*time.Second)
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
	r := e.run("", "sessions", "list", "--json")
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("sessions list: %v %s", err, r.stdout)
	}
	n := 0
	for _, m := range e.show(list[0].ID).Messages {
		if m.Role == "user" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the prompt is stored %d times, want once", n)
	}
}

// TestTUIResumedViewMatchesLive runs a session with an attached file, a
// tool call and a cancelled stream, then resumes it: the resumed view
// shows the same tool card (title and timing), the message as typed with
// its attachment noted, and the partial answer of the cancelled turn.
func TestTUIResumedViewMatchesLive(t *testing.T) {
	e := newEnv(t, llmtest.Call("read_file", `{"path":"a.txt"}`), llmtest.Text("answer one"),
		llmtest.Reply{Text: "partial words then silence", Hang: true, Pieces: 2})
	e.writeWS("a.txt", "alpha\nbeta\ngamma\n")
	p := e.startTUI()
	p.typeLine("explain @a.txt")
	p.waitFor("answer one", 20*time.Second)
	p.typeLine("second question")
	p.waitFor("partial words", 20*time.Second)
	p.keys("Escape")
	live := p.waitFor("Cancelled.", 20*time.Second)
	p.keys("C-u", "C-d")
	p.waitFor("EXITED=0", 10*time.Second)
	card := ""
	for _, l := range strings.Split(live, "\n") {
		if strings.HasPrefix(l, "✓ ") {
			card = strings.TrimSpace(l)
		}
	}
	if card == "" {
		t.Fatalf("no tool card on the live screen:\n%s", live)
	}

	r := e.startTUIWaiting("Resumed session", "--continue")
	s := r.waitFor("partial words", 20*time.Second)
	for _, want := range []string{card, "› explain @a.txt", "attached: a.txt (3 lines)", "answer one", "Cancelled.", "first token"} {
		if !strings.Contains(s, want) {
			t.Errorf("the resumed view lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "<file path") {
		t.Errorf("the resumed view prints the attachment:\n%s", s)
	}
}

// TestTUIClearEmptiesScreen: /clear in tmux leaves nothing printed before
// it on the screen or in the scrollback, and the input box works on.
func TestTUIClearEmptiesScreen(t *testing.T) {
	e := newEnv(t, llmtest.Text("an answer to clear away"), llmtest.Text("after the clear"))
	p := e.startTUI()
	p.typeLine("first")
	p.waitFor("an answer to clear away", 20*time.Second)
	p.typeLine("/clear")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(p.screen(), "an answer to clear away") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if s := p.screen(); strings.Contains(s, "an answer to clear away") {
		t.Fatalf("/clear left the answer on the screen:\n%s", s)
	}
	p.typeLine("second")
	s := p.waitFor("after the clear", 20*time.Second)
	if n := strings.Count(s, "Ask mx-claw"); n != 1 {
		t.Errorf("the input box shows %d times after /clear:\n%s", n, s)
	}
}

// TestTUICtrlCCancelsTurn: Ctrl-C while the agent works cancels the turn
// and mx-claw goes on; Ctrl-C twice on the idle prompt quits.
func TestTUICtrlCCancelsTurn(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "partial answer", Hang: true, Pieces: 1}, llmtest.Text("still here"))
	p := e.startTUI()
	p.typeLine("say something long")
	p.waitFor("partial", 20*time.Second)
	p.keys("C-c")
	p.waitFor("Cancelled.", 20*time.Second)
	p.typeLine("again")
	p.waitFor("still here", 20*time.Second)
	p.keys("C-c")
	time.Sleep(100 * time.Millisecond)
	p.keys("C-c")
	p.waitFor("EXITED=0", 10*time.Second)
}

// TestTUISlashMenuAndModelPicker: "/" opens the command menu with
// descriptions, typing filters it, Enter on /model opens the picker of
// every ready provider's models, and the session switches.
func TestTUISlashMenuAndModelPicker(t *testing.T) {
	e := newEnv(t, llmtest.Text("from the other model"))
	p := e.startTUI()
	p.keys("/")
	p.waitFor("show this help", 10*time.Second)
	p.tmux("send-keys", "-t", "main", "-l", "mod")
	// The menu filters: /model selected, /help gone. The visible screen
	// only: a long menu drawn before the filter may have scrolled part of
	// itself into the scrollback, where no terminal program can erase it.
	p.waitVisible("the menu filtered to /model", func(s string) bool {
		return strings.Contains(s, "› /model") && !strings.Contains(s, "show this help")
	}, 10*time.Second)
	p.keys("Enter")
	s := p.waitFor("Select a model for this session", 10*time.Second)
	if !strings.Contains(s, "fake/fake-model · current") || !strings.Contains(s, "fake/other-model") {
		t.Errorf("picker:\n%s", s)
	}
	p.keys("Down")
	time.Sleep(100 * time.Millisecond)
	p.keys("Enter")
	p.waitFor("Session model: fake/other-model", 10*time.Second)
	p.typeLine("hello")
	p.waitFor("from the other model", 20*time.Second)
	if reqs := e.srv.ChatRequests(); len(reqs) != 1 || reqs[0].Chat.Model != "other-model" {
		t.Errorf("the turn did not use the picked model")
	}
}

// TestTUIShiftTabCyclesPermissionMode: Shift+Tab switches the session to
// acceptEdits, shown in the status line, and the next edit runs without
// asking; bypass is not in the cycle of a REPL started without it.
func TestTUIShiftTabCyclesPermissionMode(t *testing.T) {
	e := newEnv(t, llmtest.Call("write_file", `{"path":"new.txt","content":"hi\n"}`), llmtest.Text("wrote it"))
	p := e.startTUI()
	p.keys("BTab")
	p.waitFor("Permission mode: acceptEdits", 10*time.Second)
	p.waitFor("fake/fake-model · acceptEdits ·", 10*time.Second) // the status line
	p.typeLine("write new.txt")
	s := p.waitFor("wrote it", 20*time.Second)
	if strings.Contains(s, "[y] yes") {
		t.Errorf("asked for an edit in acceptEdits:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "new.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("new.txt = %q, %v", b, err)
	}
	for _, want := range []string{"Permission mode: plan", "Permission mode: default"} {
		p.keys("BTab")
		p.waitFor(want, 10*time.Second)
	}
	if strings.Contains(p.screen(), "Permission mode: bypass") {
		t.Error("bypass is in the cycle")
	}
}

// TestTUIMarkdownRenderedWhileStreamingSurvivesResize streams a Markdown
// answer slowly and resizes the terminal mid-stream: finished blocks show
// rendered before the answer ends, and no heading or line is repeated.
func TestTUIMarkdownRenderedWhileStreamingSurvivesResize(t *testing.T) {
	var answer strings.Builder
	answer.WriteString("# Streaming Heading\n\n- first point\n- second point\n\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&answer, "Paragraph number %02d of the answer, long enough to wrap when the window gets narrower than before.\n\n", i)
	}
	answer.WriteString("## Closing Heading\n\nThe end.")
	e := newEnv(t, llmtest.Reply{Text: answer.String(), Pieces: 60, ChunkDelay: 60 * time.Millisecond})
	p := e.startTUI()
	p.typeLine("explain")
	s := p.waitFor("Paragraph number 03", 20*time.Second)
	if !strings.Contains(s, "• first point") || strings.Contains(s, "- first point") {
		t.Errorf("the finished list is not rendered while the answer streams:\n%s", s)
	}
	p.tmux("resize-window", "-t", "main", "-x", "60", "-y", "20")
	time.Sleep(300 * time.Millisecond)
	p.tmux("resize-window", "-t", "main", "-x", "90", "-y", "24")
	p.waitFor("took", 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	s = p.screen()
	for _, want := range []string{"Streaming Heading", "Closing Heading", "Paragraph number 01", "Paragraph number 12", "The end."} {
		if n := strings.Count(s, want); n != 1 {
			t.Errorf("%q shows %d times, want once", want, n)
		}
	}
	if t.Failed() {
		t.Logf("screen:\n%s", s)
	}
}

// TestTUIApprovalShowsWholeCommandAndDiff: a long command is wrapped in
// the approval, not cut; an edit shows numbered lines with context; e
// prints the whole change before answering.
func TestTUIApprovalShowsWholeCommandAndDiff(t *testing.T) {
	long := "touch start.txt && " + strings.Repeat("printf 'step' && ", 8) + "touch THE-END-OF-THE-COMMAND.txt"
	cmd, _ := json.Marshal(map[string]string{"command": long})
	var file strings.Builder
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&file, "row %02d\n", i)
	}
	e := newEnv(t, llmtest.Call("run_command", string(cmd)), llmtest.Call("read_file", `{"path":"f.txt"}`),
		llmtest.Call("edit_file", `{"path":"f.txt","old_string":"row 40\n","new_string":"row forty\n"}`), llmtest.Text("all done"))
	e.writeWS("f.txt", file.String())
	p := e.startTUI()
	p.typeLine("go")
	s := p.waitFor("[y] yes", 20*time.Second)
	if !strings.Contains(s, "THE-END-OF-THE-COMMAND") {
		t.Errorf("the command is cut in the approval:\n%s", s)
	}
	p.keys("y")
	s = p.waitFor("Allow edit_file?", 20*time.Second)
	for _, want := range []string{"39   row 39", "40 - row 40", "40 + row forty", "41   row 41"} {
		if !strings.Contains(s, want) {
			t.Errorf("the edit approval lacks %q:\n%s", want, s)
		}
	}
	p.keys("e")
	p.waitFor("(in full; answer below)", 10*time.Second)
	p.keys("y")
	p.waitFor("all done", 20*time.Second)
}

// TestTUIFirstRunWizard starts mx-claw with no config: the wizard runs in
// the terminal, asks again after a bad URL, offers the server's models,
// tests them with one request, saves, and the REPL starts on them.
func TestTUIFirstRunWizard(t *testing.T) {
	e := newEnv(t, llmtest.Text("OK"), llmtest.Text("hello from the new model"))
	if err := os.Remove(filepath.Join(e.home, "config.json")); err != nil {
		t.Fatal(err)
	}
	e.srv.SetModels("coder-one", "coder-two")
	p := e.startTUIWaiting("Select a model provider")
	s := p.screen()
	if !strings.Contains(s, "Welcome to mx-claw") || !strings.Contains(s, "Add a custom provider") {
		t.Fatalf("no wizard:\n%s", s)
	}
	p.typeLine("4")
	p.waitFor("Provider name", 10*time.Second)
	p.typeLine("local")
	p.waitFor("Base URL", 10*time.Second)
	p.typeLine("not a url")
	p.waitFor("try again", 10*time.Second)
	p.typeLine(e.srv.URL())
	p.waitFor("API Key for local", 10*time.Second)
	p.keys("Enter")
	s = p.waitFor("Select the default model", 10*time.Second)
	if !strings.Contains(s, "lists 2 models") || !strings.Contains(s, "coder-two") {
		t.Errorf("the server's models are not offered:\n%s", s)
	}
	p.typeLine("2")
	p.waitFor("answered", 20*time.Second)
	p.waitFor("│ ", 20*time.Second)
	p.typeLine("hi")
	p.waitFor("hello from the new model", 20*time.Second)
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 || reqs[0].Chat.Model != "coder-two" || reqs[1].Chat.Model != "coder-two" {
		t.Errorf("%d requests; want the test request and the turn, on coder-two", len(reqs))
	}
	cfg := e.readHome("config.json")
	if !strings.Contains(cfg, `"activeProvider": "local"`) || !strings.Contains(cfg, `"model": "coder-two"`) {
		t.Errorf("config.json:\n%s", cfg)
	}
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
