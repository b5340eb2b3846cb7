package tui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fakeBackend records what the UI asks; Run blocks until cancelled, since
// the tests feed the turn's events themselves.
type fakeBackend struct {
	mu       sync.Mutex
	answers  []protocol.ResolveApproval
	queued   []string
	removed  []int64
	ws       string
	runs     []string
	compacts []string
	cancels  int
	sessions []protocol.Session
}

func (f *fakeBackend) Workspace() string {
	if f.ws != "" {
		return f.ws
	}
	return "/work/ws"
}
func (f *fakeBackend) NewSession(context.Context) (protocol.Session, error) {
	return protocol.Session{ID: "newsession000001", Model: "fake/fake-model"}, nil
}
func (f *fakeBackend) ResumeSession(_ context.Context, id string) (protocol.Session, []protocol.Event, error) {
	return protocol.Session{ID: id, Model: "fake/fake-model", MessageCount: 2}, []protocol.Event{
		{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleUser, Content: "old question"}},
		{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "old answer"}},
	}, nil
}
func (f *fakeBackend) ListSessions(context.Context, int) ([]protocol.Session, error) {
	return f.sessions, nil
}
func (f *fakeBackend) Run(ctx context.Context, _, input string, _ func(protocol.Event)) error {
	f.mu.Lock()
	f.runs = append(f.runs, input)
	f.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// waitRuns waits up to a second for n turns to have started and returns
// them.
func (f *fakeBackend) waitRuns(n int) []string {
	for deadline := time.Now().Add(time.Second); ; {
		f.mu.Lock()
		runs := append([]string(nil), f.runs...)
		f.mu.Unlock()
		if len(runs) >= n || time.Now().After(deadline) {
			return runs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fakeBackend) Continue(ctx context.Context, _ string, _ func(protocol.Event)) error {
	f.mu.Lock()
	f.runs = append(f.runs, "<continue>")
	f.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}
func (f *fakeBackend) Compact(ctx context.Context, _, instructions string, _ func(protocol.Event)) (bool, error) {
	f.mu.Lock()
	f.compacts = append(f.compacts, instructions)
	f.mu.Unlock()
	<-ctx.Done()
	return false, ctx.Err()
}
func (f *fakeBackend) Enqueue(_ context.Context, sid, input string) (protocol.QueuedInput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, input)
	return protocol.QueuedInput{ID: int64(len(f.queued)), SessionID: sid, Content: input}, nil
}
func (f *fakeBackend) RemoveQueued(_ context.Context, sid string, id int64) (protocol.QueuedInput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, id)
	return protocol.QueuedInput{ID: id, SessionID: sid, Content: f.queued[id-1]}, nil
}
func (f *fakeBackend) Answer(_ context.Context, a protocol.ResolveApproval) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, a)
	return nil
}
func (f *fakeBackend) Cancel(string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels++
	return true
}
func (f *fakeBackend) Mode() string    { return "default" }
func (f *fakeBackend) Modes() []string { return []string{"default", "acceptEdits", "plan"} }
func (f *fakeBackend) SetMode(_ context.Context, _, mode string) (string, error) {
	if mode == "bypass" {
		return "", errors.New("bypass can only be chosen at start")
	}
	return mode, nil
}
func (f *fakeBackend) Permissions(context.Context, string) ([]string, error) {
	return []string{"mode: default (the default)", "  allow run_command(make:*)  (settings.json)"}, nil
}
func (f *fakeBackend) ModelCommand(_ context.Context, _ string, args []string, _ modelcmd.Prompter) (string, string, error) {
	return "model: fake/other-model\n", "fake/other-model", nil
}

// harness drives a Model as the program would, recording what it prints.
type harness struct {
	t       *testing.T
	m       *Model
	b       *fakeBackend
	printed []string
	clock   time.Time
	// patience is how long a command's message is waited for before
	// the command is taken for one that runs on (the listener, a
	// spinner); 30ms when zero.
	patience time.Duration
}

func newHarness(t *testing.T, width, height int) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, b: &fakeBackend{}, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	h.m = New(ctx, Options{Backend: h.b, Session: protocol.Session{ID: "5e55101d00000001", Model: "fake/fake-model"},
		Width: width, Height: height, NoColor: true, HistoryFile: filepath.Join(t.TempDir(), "history.jsonl"),
		Now: func() time.Time { return h.clock }})
	h.m.onPrint = func(s string) { h.printed = append(h.printed, ansi.Strip(s)) }
	h.m.flush()
	t.Cleanup(func() { cancel(); h.m.Wait(time.Second) })
	return h
}

// send feeds msg to Update and then the messages of the commands it
// returns that finish quickly (not the listener or the spinner).
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd, 0)
}

func (h *harness) run(cmd tea.Cmd, depth int) {
	if cmd == nil || depth > 3 {
		return
	}
	ch := make(chan tea.Msg, 1)
	go func() { ch <- cmd() }()
	select {
	case msg := <-ch:
		switch msg := msg.(type) {
		case nil, spinner.TickMsg, printedMsg:
		case tea.BatchMsg:
			for _, c := range msg {
				h.run(c, depth+1)
			}
		default:
			_, next := h.m.Update(msg)
			h.run(next, depth+1)
		}
	case <-time.After(cmp.Or(h.patience, 30*time.Millisecond)):
	}
}

func (h *harness) event(e protocol.Event) { h.send(eventMsg{e}) }

func (h *harness) key(s string) {
	switch s {
	case "enter":
		h.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	case "esc":
		h.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	case "tab":
		h.send(tea.KeyPressMsg{Code: tea.KeyTab})
	case "up":
		h.send(tea.KeyPressMsg{Code: tea.KeyUp})
	case "down":
		h.send(tea.KeyPressMsg{Code: tea.KeyDown})
	case "shift+tab":
		h.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	case "ctrl+c":
		h.send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	default:
		for _, r := range s {
			h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

func (h *harness) typeLine(s string) {
	h.m.input.SetValue(s)
	h.key("enter")
}

// screen is what a terminal would show: the printed scrollback, then the
// live area, without colours.
func (h *harness) screen() string {
	var b strings.Builder
	for _, p := range h.printed {
		b.WriteString(p + "\n")
	}
	b.WriteString("──── live area ────\n")
	b.WriteString(ansi.Strip(h.m.View().Content))
	b.WriteString("\n")
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func ok(b bool) *bool { return &b }

func usage(in, out int64) *protocol.Usage { return &protocol.Usage{InputTokens: in, OutputTokens: out} }

const editDiff = "Edited main.go.\n\n--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-func old() {}\n+func new() {}\n \n"

// turnWithTool plays a turn up to a running tool.
func turnWithTool(h *harness) {
	h.typeLine("rename old to new")
	h.clock = h.clock.Add(400 * time.Millisecond)
	h.event(protocol.Event{Type: protocol.EventTurnStarted, Model: "fake/fake-model"})
	h.event(protocol.Event{Type: protocol.EventReasoningDelta, Text: "The user wants a rename."})
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Message: &protocol.Message{Role: protocol.RoleAssistant, Reasoning: "The user wants a rename."}})
	h.event(protocol.Event{Type: protocol.EventUsage, Usage: usage(1200, 40), ContextPercent: 3})
	h.event(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "c1", ToolName: "edit_file", Summary: "Edit main.go"})
}

func TestViewGolden(t *testing.T) {
	cases := []struct {
		name          string
		width, height int
		play          func(h *harness)
	}{
		{"idle", 80, 24, func(h *harness) {}},
		{"streaming", 80, 24, func(h *harness) {
			turnWithTool(h)
			h.event(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "c1", ToolName: "edit_file", Summary: "Edit main.go",
				OK: ok(true), DurationMS: 12, Message: &protocol.Message{Role: protocol.RoleTool, Content: editDiff}})
			h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: "I renamed `old` to `new`.\n\nNow "})
			h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: "running the tests"})
		}},
		{"done", 80, 24, func(h *harness) {
			turnWithTool(h)
			h.event(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "c1", ToolName: "edit_file", Summary: "Edit main.go",
				OK: ok(true), DurationMS: 12, Message: &protocol.Message{Role: protocol.RoleTool, Content: editDiff}})
			h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: "Renamed."})
			h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: "Renamed **old** to `new`.\n\n- one\n- two",
				Message: &protocol.Message{Role: protocol.RoleAssistant, Content: "Renamed **old** to `new`.\n\n- one\n- two"}})
			h.event(protocol.Event{Type: protocol.EventUsage, Usage: usage(1300, 20), ContextPercent: 4})
			h.clock = h.clock.Add(2 * time.Second)
			h.send(turnDoneMsg{})
		}},
		{"markdown", 80, 40, markdownAnswer},
		{"markdown-60", 60, 40, markdownAnswer},
		{"approval", 80, 24, approval},
		{"approval-60", 60, 24, approval},
		{"failed", 80, 24, func(h *harness) {
			h.typeLine("hi")
			h.send(turnDoneMsg{err: errors.New("provider: 500 internal error")})
		}},
		{"compacting", 80, 24, func(h *harness) {
			h.typeLine("/compact keep the API notes")
		}},
		{"compacted", 80, 24, func(h *harness) {
			h.typeLine("/compact")
			h.event(protocol.Event{Type: protocol.EventCompaction, Compaction: &protocol.Compaction{Summary: "the summary"},
				Text: "compacted 4 messages (about 120 tokens) into a summary"})
			h.send(compactDoneMsg{done: true})
		}},
		{"queued", 80, 24, func(h *harness) {
			h.typeLine("first")
			h.event(protocol.Event{Type: protocol.EventTurnStarted})
			h.typeLine("second, typed while busy")
		}},
		{"slash-menu", 80, 24, func(h *harness) {
			h.m.input.SetValue("/")
			h.key("down")
		}},
		{"slash-menu-filtered", 60, 24, func(h *harness) {
			h.m.input.SetValue("/re")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.width, c.height)
			c.play(h)
			s := h.screen()
			for i, l := range strings.Split(s, "\n") {
				if w := ansi.StringWidth(l); w > c.width {
					t.Errorf("line %d is %d cells wide, more than %d: %q", i, w, c.width, l)
				}
			}
			if n := strings.Count(ansi.Strip(h.m.View().Content), "\n") + 1; n > c.height {
				t.Errorf("live area is %d lines, taller than the terminal (%d)", n, c.height)
			}
			golden(t, c.name, s)
		})
	}
}

// richMarkdown is an answer using most of the Markdown models write.
const richMarkdown = "## Summary\n\nI renamed **old** to `new` in *two* files and ran the tests; see [the guide](https://go.dev/doc/effective_go) for the naming rules.\n\n1. Edited `main.go`:\n   - renamed the function\n   - updated its callers, which took a while because there were many of them\n2. Ran `go test ./...`\n\n> Note: the public API did not change.\n\n```go\nfunc new() {} // was old\n```\n\n| File | Lines |\n|------|------:|\n| main.go | 3 |\n| main_test.go | 12 |"

func markdownAnswer(h *harness) {
	h.typeLine("rename old to new")
	h.event(protocol.Event{Type: protocol.EventTurnStarted, Model: "fake/fake-model"})
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: richMarkdown,
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: richMarkdown}})
	h.send(turnDoneMsg{})
}

func approval(h *harness) {
	h.typeLine("make it")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventPermissionRequested, SessionID: "5e55101d00000001", RequestID: "r1", ToolName: "run_command",
		Summary: "Run make build", Arguments: json.RawMessage(`{"command":"make build"}`), Text: "run_command(make build)",
		Error: "run_command may change files"})
}

func TestApprovalKeys(t *testing.T) {
	for _, c := range []struct {
		keys    string
		approve bool
		scope   protocol.ApprovalScope
		fb      string
	}{
		{"y", true, "once", ""}, {"s", true, "session", ""}, {"a", true, "always", ""}, {"n", false, "once", ""},
		{"f", false, "once", "use make test instead"},
	} {
		t.Run(c.keys, func(t *testing.T) {
			h := newHarness(t, 80, 24)
			approval(h)
			h.key(c.keys)
			if c.fb != "" {
				if !strings.Contains(h.screen(), "Tell the model") {
					t.Fatalf("no feedback prompt:\n%s", h.screen())
				}
				h.typeLine(c.fb)
			}
			h.b.mu.Lock()
			defer h.b.mu.Unlock()
			if len(h.b.answers) != 1 {
				t.Fatalf("answers = %+v", h.b.answers)
			}
			a := h.b.answers[0]
			if a.RequestID != "r1" || a.Approve != c.approve || a.Scope != c.scope || a.Feedback != c.fb {
				t.Errorf("answer = %+v", a)
			}
			if len(h.m.approvals) != 0 {
				t.Error("approval still shown")
			}
		})
	}
}

func TestQueuedMessageIsEnqueuedAndShownWhenSent(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("first")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.typeLine("second")
	if got := h.b.queued; len(got) != 1 || got[0] != "second" {
		t.Fatalf("enqueued %v", got)
	}
	if !strings.Contains(h.screen(), "queued: second") {
		t.Fatalf("not shown as queued:\n%s", h.screen())
	}
	h.event(protocol.Event{Type: protocol.EventTurnCompleted})
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	if strings.Contains(h.screen(), "queued: second") || !strings.Contains(h.screen(), "› second") {
		t.Fatalf("queued message not shown as sent:\n%s", h.screen())
	}
}

// TestQueuedMessageEditedAndGivenBack takes a queued message back into
// the input box with ↑ (removing it from the queue), queues it again, and
// then cancels the turn: the message the core gives back returns to the
// input box as typed.
func TestQueuedMessageEditedAndGivenBack(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("first")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.typeLine("second")
	h.key("up")
	if got := h.m.input.Value(); got != "second" || len(h.b.removed) != 1 || len(h.m.queued) != 0 {
		t.Fatalf("↑ gave %q, removed %v, still queued %v", got, h.b.removed, h.m.queued)
	}
	h.m.input.SetValue("second, edited")
	h.key("enter")
	if len(h.m.queued) != 1 || h.m.queued[0].text != "second, edited" {
		t.Fatalf("queued %+v", h.m.queued)
	}
	h.key("esc")
	h.event(protocol.Event{Type: protocol.EventInputReturned,
		Queued: []protocol.QueuedInput{{ID: h.m.queued[0].id, Content: "second, edited"}}})
	h.send(turnDoneMsg{err: context.Canceled})
	if got := h.m.input.Value(); got != "second, edited" {
		t.Errorf("input after the cancel = %q, want the queued message", got)
	}
	if len(h.m.queued) != 0 || strings.Contains(h.screen(), "queued:") {
		t.Errorf("still shown as queued:\n%s", h.screen())
	}
}

func TestEscCancelsAndCtrlCTwiceQuits(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.key("esc")
	if h.b.cancels != 1 {
		t.Fatalf("cancels = %d", h.b.cancels)
	}
	h.send(turnDoneMsg{err: context.Canceled})
	if !strings.Contains(h.screen(), "Cancelled.") {
		t.Fatalf("no Cancelled.:\n%s", h.screen())
	}
	h.key("ctrl+c")
	if h.m.quitting {
		t.Fatal("one Ctrl-C quit")
	}
	h.key("ctrl+c")
	if !h.m.quitting {
		t.Fatal("two Ctrl-C did not quit")
	}
}

// TestCtrlCCancelsRunningTurn: Ctrl-C while the agent works cancels the
// turn as Esc does and does not quit, however often it is pressed then;
// on a typed prompt it clears the text first.
func TestCtrlCCancelsRunningTurn(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.key("ctrl+c")
	h.key("ctrl+c")
	if h.b.cancels != 2 || h.m.quitting {
		t.Fatalf("cancels %d, quitting %v; want the turn cancelled and mx-claw running", h.b.cancels, h.m.quitting)
	}
	h.send(turnDoneMsg{err: context.Canceled})
	h.m.input.SetValue("half typed")
	h.key("ctrl+c")
	if h.m.input.Value() != "" || h.m.quitting {
		t.Fatalf("input %q, quitting %v", h.m.input.Value(), h.m.quitting)
	}
	h.key("ctrl+c")
	h.key("ctrl+c")
	if !h.m.quitting {
		t.Fatal("two Ctrl-C on an empty prompt did not quit")
	}
}

func TestUntrustedTextIsSanitized(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("hi")
	evil := "look\x1b]52;c;aGVsbG8=\x07 here \u202e"
	h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: evil})
	h.event(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "x", Summary: "Read \x1b[2Jfile"})
	raw := h.m.View().Content
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e"} {
		if strings.Contains(raw, bad) {
			t.Errorf("view contains %q", bad)
		}
	}
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: evil, Message: &protocol.Message{Role: protocol.RoleAssistant, Content: evil}})
	for _, p := range h.printed {
		if strings.Contains(p, "]52;") && strings.Contains(p, "\x07") {
			t.Errorf("printed an OSC 52 sequence: %q", p)
		}
	}
}

func TestHistoryPersistsAndCompletion(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("/help")
	if !strings.Contains(h.screen(), "/sessions") {
		t.Fatalf("/help lists no commands:\n%s", h.screen())
	}
	h.m.input.SetValue("/ses")
	h.key("tab")
	if got := h.m.input.Value(); got != "/sessions " {
		t.Errorf("completed to %q", got)
	}
	h.m.input.Reset()
	h.key("up")
	if got := h.m.input.Value(); got != "/help" {
		t.Errorf("history ↑ gave %q", got)
	}
	again := loadHistory(h.m.opts.HistoryFile)
	if len(again.entries) != 1 || again.entries[0] != "/help" {
		t.Errorf("history file holds %q", again.entries)
	}
}

func TestSlashCommands(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("/permissions")
	h.typeLine("/model use fake other-model")
	if h.m.model != "fake/other-model" {
		t.Errorf("model = %q", h.m.model)
	}
	h.typeLine("/resume abc")
	h.typeLine("/bogus")
	s := h.screen()
	for _, want := range []string{"allow run_command(make:*)", "model: fake/other-model", "› old question", "old answer", "Unknown command /bogus"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
}

func TestCompactCommand(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("/compact   keep the API notes ")
	if !strings.Contains(h.screen(), "Compacting…") {
		t.Fatalf("no progress shown:\n%s", h.screen())
	}
	var got []string
	for deadline := time.Now().Add(2 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		h.b.mu.Lock()
		got = h.b.compacts
		h.b.mu.Unlock()
	}
	if len(got) != 1 || got[0] != "keep the API notes" {
		t.Fatalf("Compact called with %q", got)
	}
	h.typeLine("/new")
	if !strings.Contains(h.screen(), "/new is not available while a turn runs") {
		t.Errorf("a command ran during the compaction:\n%s", h.screen())
	}
	h.send(compactDoneMsg{})
	if s := h.screen(); !strings.Contains(s, "Nothing to compact yet.") || strings.Contains(s, "Compacting…") {
		t.Errorf("nothing-to-compact not shown:\n%s", s)
	}
	h.typeLine("/compact")
	h.send(compactDoneMsg{err: errors.New("provider: 500 internal error")})
	if s := h.screen(); !strings.Contains(s, "Request failed: provider: 500 internal error") {
		t.Errorf("failure not shown:\n%s", s)
	}
	h.m.input.SetValue("/comp")
	h.key("tab")
	if got := h.m.input.Value(); got != "/compact " {
		t.Errorf("completed to %q", got)
	}
	h.typeLine("/help")
	if !strings.Contains(h.screen(), "/compact") {
		t.Errorf("/help lacks /compact")
	}
}

// TestRetryDropsPartialAnswer streams part of an answer, then the request
// is sent again (a stall): the partial text leaves the live area.
func TestRetryDropsPartialAnswer(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: "half an ans"})
	h.event(protocol.Event{Type: protocol.EventRetry, Attempt: 1, DelayMS: 500, Error: "the provider sent nothing for 2m0s"})
	if s := h.screen(); strings.Contains(s, "half an ans") || !strings.Contains(s, "sending it again") {
		t.Errorf("live area after the retry:\n%s", s)
	}
}

// TestLongRetryWaitSaysHowLongAndEscCancels: a provider asking to wait
// 45s: the live area counts down and says Esc cancels.
func TestLongRetryWaitSaysHowLongAndEscCancels(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.event(protocol.Event{Type: protocol.EventRetry, Attempt: 1, DelayMS: 45000,
		Error: "provider returned 429 Too Many Requests: Rate limit reached for requests per minute on this organisation"})
	if s := h.screen(); !strings.Contains(s, "in 45s") || !strings.Contains(s, "Esc cancels") {
		t.Errorf("live area:\n%s", s)
	}
	h.clock = h.clock.Add(30 * time.Second)
	if s := h.screen(); !strings.Contains(s, "in 15s") {
		t.Errorf("no countdown:\n%s", s)
	}
}

// TestStepLimitOffersContinue stops a turn at its step budget: the REPL
// says the model is not done and one key continues it.
func TestStepLimitOffersContinue(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventTurnFailed, Code: protocol.CodeMaxIterations, Error: "Maximum agent iterations reached (300)"})
	h.send(turnDoneMsg{err: errors.New("Maximum agent iterations reached (300)")})
	s := h.screen()
	if strings.Contains(s, "Request failed") || !strings.Contains(s, "Press c to let it continue") {
		t.Fatalf("screen:\n%s", s)
	}
	h.send(tea.KeyPressMsg{Code: 'c', Text: "c"})
	if got := h.b.waitRuns(2); len(got) != 2 || got[1] != "<continue>" {
		t.Errorf("runs %q, want the turn continued", got)
	}
}

// TestFailedPromptRetriedNotDuplicated fails a turn before the model
// answered: ↑ Enter (the same prompt again) and /retry continue the
// stored transcript instead of sending the prompt as a new message.
func TestFailedPromptRetriedNotDuplicated(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("fix the build")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.send(turnDoneMsg{err: errors.New("connection refused")})
	if !strings.Contains(h.screen(), "/retry") {
		t.Fatalf("no hint to retry:\n%s", h.screen())
	}
	h.key("up")
	h.key("enter")
	if got := h.b.waitRuns(2); len(got) != 2 || got[1] != "<continue>" {
		t.Fatalf("runs %q: the prompt was sent again as a new message", got)
	}
	h.send(turnDoneMsg{err: errors.New("connection refused")})
	h.typeLine("/retry")
	if got := h.b.waitRuns(3); len(got) != 3 || got[2] != "<continue>" {
		t.Errorf("runs %q after /retry", got)
	}
}

// TestToolCardCountsHiddenLinesOfWholeResult: `seq 1 500` shows four
// lines and says 497 more (the 496 numbers and the exit line), counted on
// the whole result, not on the event's short preview.
func TestToolCardCountsHiddenLinesOfWholeResult(t *testing.T) {
	h := newHarness(t, 80, 24)
	var out strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&out, "%d\n", i)
	}
	out.WriteString("[exit code 0, 0.0s]")
	ok := true
	h.typeLine("count")
	h.event(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "c", ToolName: "run_command", Summary: "Run seq 1 500",
		OK: &ok, Preview: out.String()[:240] + "…", Message: &protocol.Message{Role: protocol.RoleTool, Content: out.String()}})
	if s := h.screen(); !strings.Contains(s, "… 497 more lines") {
		t.Errorf("card:\n%s", s)
	}
}

// TestFirstTokenLeavesOutApprovalWait: ten seconds spent answering an
// approval before the first token are not the model's.
func TestFirstTokenLeavesOutApprovalWait(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.event(protocol.Event{Type: protocol.EventTurnStarted})
	h.event(protocol.Event{Type: protocol.EventPermissionRequested, RequestID: "r1", ToolName: "run_command", Summary: "Run make"})
	h.clock = h.clock.Add(10 * time.Second)
	h.key("y")
	h.clock = h.clock.Add(time.Second)
	h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: "done"})
	h.send(turnDoneMsg{})
	if s := h.screen(); !strings.Contains(s, "first token 1.0s") {
		t.Errorf("telemetry:\n%s", s)
	}
}

// TestCompactionUpdatesContextUse: the status line shows the context use
// the compaction left, not the one before it.
func TestCompactionUpdatesContextUse(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("go")
	h.event(protocol.Event{Type: protocol.EventUsage, Usage: usage(70000, 100), ContextPercent: 72})
	h.send(turnDoneMsg{})
	h.typeLine("/compact")
	h.event(protocol.Event{Type: protocol.EventCompaction, Text: "compacted 30 messages", ContextPercent: 9})
	h.send(compactDoneMsg{done: true})
	if s := h.screen(); !strings.Contains(s, "ctx 9%") {
		t.Errorf("status line after /compact:\n%s", s)
	}
}

// TestSlashMenuFiltersAndRuns: the menu lists the commands that match what
// is typed, Enter runs the chosen one, Esc closes the menu.
func TestSlashMenuFiltersAndRuns(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.m.input.SetValue("/co")
	s := h.screen()
	for _, want := range []string{"/compact", "/cost", "show tokens and estimated cost"} {
		if !strings.Contains(s, want) {
			t.Errorf("menu lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "show this help") {
		t.Errorf("menu not filtered:\n%s", s)
	}
	h.key("down")
	h.key("enter")
	if !strings.Contains(h.screen(), "tokens:") {
		t.Errorf("Enter did not run /cost:\n%s", h.screen())
	}
	h.m.input.SetValue("/he")
	h.key("esc")
	if strings.Contains(h.screen(), "show this help") {
		t.Errorf("Esc did not close the menu:\n%s", h.screen())
	}
}

// TestShiftTabCyclesMode: Shift+Tab goes default → acceptEdits → plan →
// default, shown in the status line; /permissions MODE sets it.
func TestShiftTabCyclesMode(t *testing.T) {
	h := newHarness(t, 80, 24)
	for _, want := range []string{"acceptEdits", "plan", "default"} {
		h.key("shift+tab")
		if h.m.mode != want || !strings.Contains(h.m.statusLine(), " · "+want+" · ") {
			t.Fatalf("mode %q, status %q; want %s", h.m.mode, h.m.statusLine(), want)
		}
	}
	h.typeLine("/permissions plan")
	if h.m.mode != "plan" {
		t.Errorf("/permissions plan: mode %q", h.m.mode)
	}
	h.typeLine("/permissions bypass")
	if h.m.mode != "plan" || !strings.Contains(h.screen(), "bypass can only be chosen at start") {
		t.Errorf("bypass: mode %q\n%s", h.m.mode, h.screen())
	}
}

// TestAnswerRenderedAsItStreams streams a Markdown answer in small pieces:
// finished blocks are printed rendered while it streams (the open one
// stays raw in the live area), and what is printed in the end is what
// rendering the whole answer prints.
func TestAnswerRenderedAsItStreams(t *testing.T) {
	h := newHarness(t, 80, 24)
	answer := "## Plan\n\n- read the code\n- **fix** it\n\n```go\nfunc f() {}\n```\n\nThen run the tests and report."
	h.typeLine("go")
	before := len(h.printed)
	for i := 0; i < len(answer); i += 5 {
		h.event(protocol.Event{Type: protocol.EventMessageDelta, Text: answer[i:min(i+5, len(answer))]})
		if strings.HasPrefix(answer[i:], "```go") {
			s := h.screen()
			if !strings.Contains(s, "• read the code") || strings.Contains(s, "- read the code") {
				t.Fatalf("the finished list is not rendered while streaming:\n%s", s)
			}
		}
	}
	h.event(protocol.Event{Type: protocol.EventMessageCompleted, Text: answer,
		Message: &protocol.Message{Role: protocol.RoleAssistant, Content: answer}})
	got := strings.Join(h.printed[before:], "\n")
	if want := ansi.Strip(h.m.r.markdown(answer)); got != want {
		t.Errorf("printed in parts:\n%s\n--- rendered whole:\n%s", got, want)
	}
}

// TestApprovalShowsNumberedDiffAndExpands: an edit's approval shows the
// change as a diff of the file with line numbers and context, wraps a
// long line instead of cutting it, and e prints the whole of it.
func TestApprovalShowsNumberedDiffAndExpands(t *testing.T) {
	h := newHarness(t, 60, 40)
	h.b.ws = t.TempDir()
	var file strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&file, "line %d\n", i)
	}
	os.WriteFile(filepath.Join(h.b.ws, "f.txt"), []byte(file.String()), 0o644)
	long := "line 10 is now a much longer line that cannot fit in sixty columns and must wrap END"
	args, _ := json.Marshal(map[string]any{"path": "f.txt", "old_string": "line 10\n", "new_string": long + "\n"})
	h.typeLine("edit it")
	h.event(protocol.Event{Type: protocol.EventPermissionRequested, RequestID: "r1", ToolName: "edit_file", Summary: "Edit f.txt", Arguments: args})
	s := h.screen()
	for _, want := range []string{"f.txt", " 9   line 9", "10 - line 10", "10 + line 10 is now", "wrap END", "13   line 13"} {
		if !strings.Contains(s, want) {
			t.Errorf("approval lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "14   line 14") {
		t.Errorf("more than three lines of context:\n%s", s)
	}
	printed := len(h.printed)
	h.key("e")
	if all := strings.Join(h.printed[printed:], "\n"); !strings.Contains(all, "10 + line 10 is now") || !strings.Contains(all, "wrap END") {
		t.Errorf("e did not print the change in full:\n%s", all)
	}
	if len(h.m.approvals) != 1 {
		t.Error("e answered the approval")
	}
}

// erasedErr is a turn error whose prompt a hook refused.
type erasedErr struct{}

func (erasedErr) Error() string      { return "prompt blocked by a UserPromptSubmit hook: no secrets" }
func (erasedErr) PromptErased() bool { return true }

func TestBlockedPromptLeavesNoHistory(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.typeLine("/help")
	h.typeLine("my password is hunter2")
	h.send(turnDoneMsg{err: fmt.Errorf("turn: %w", erasedErr{})})
	again := loadHistory(h.m.opts.HistoryFile)
	if len(again.entries) != 1 || again.entries[0] != "/help" || len(h.m.hist.entries) != 1 {
		t.Errorf("history after a blocked prompt: file %q, memory %q", again.entries, h.m.hist.entries)
	}
	if !strings.Contains(h.screen(), "no secrets") {
		t.Errorf("the block's reason is not shown:\n%s", h.screen())
	}
}
