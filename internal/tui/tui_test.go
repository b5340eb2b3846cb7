package tui

import (
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
	runs     []string
	compacts []string
	cancels  int
	sessions []protocol.Session
}

func (f *fakeBackend) Workspace() string { return "/work/ws" }
func (f *fakeBackend) NewSession(context.Context) (protocol.Session, error) {
	return protocol.Session{ID: "newsession000001", Model: "fake/fake-model"}, nil
}
func (f *fakeBackend) ResumeSession(_ context.Context, id string) (protocol.Session, []protocol.Message, error) {
	return protocol.Session{ID: id, Model: "fake/fake-model"}, []protocol.Message{{Role: protocol.RoleUser, Content: "old question"}, {Role: protocol.RoleAssistant, Content: "old answer"}}, nil
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
func (f *fakeBackend) Compact(ctx context.Context, _, instructions string, _ func(protocol.Event)) (bool, error) {
	f.mu.Lock()
	f.compacts = append(f.compacts, instructions)
	f.mu.Unlock()
	<-ctx.Done()
	return false, ctx.Err()
}
func (f *fakeBackend) Enqueue(_ context.Context, _, input string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, input)
	return nil
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
func (f *fakeBackend) Mode() string { return "default" }
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
	case <-time.After(30 * time.Millisecond):
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
		scope   string
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
