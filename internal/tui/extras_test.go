package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// extrasBackend is a fakeBackend with memory, skills, the context report
// and custom commands.
type extrasBackend struct {
	*fakeBackend
	memArgs, skillArgs []string
}

func (x *extrasBackend) CustomCommands(context.Context) []protocol.SlashCommand {
	return []protocol.SlashCommand{
		{Name: "review", ArgumentHint: "[focus]", Description: "Review the staged changes", Source: "user"},
		{Name: "deploy", Description: "Deploy the app", Source: "project"},
		{Name: "help", Description: "a custom /help the REPL's own hides", Source: "user"},
	}
}
func (x *extrasBackend) MemoryCommand(_ context.Context, args []string) (string, error) {
	x.memArgs = args
	return "m1a2b3 → USER.md  I use tabs.", nil
}
func (x *extrasBackend) SkillsCommand(_ context.Context, _ string, args []string) (string, error) {
	x.skillArgs = args
	return "Skills of this session (1):\n  • pdf-forms  Fills in PDF forms.", nil
}
func (x *extrasBackend) ContextReport(context.Context, string) (string, error) {
	return "  instructions   4100 bytes  ~ 1000 tokens", nil
}

func newExtrasHarness(t *testing.T) (*harness, *extrasBackend) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	x := &extrasBackend{fakeBackend: &fakeBackend{}}
	h := &harness{t: t, b: x.fakeBackend, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	h.m = New(ctx, Options{Backend: x, Session: protocol.Session{ID: "5e55101d00000001", Model: "fake/fake-model"},
		Width: 100, Height: 40, NoColor: true, HistoryFile: filepath.Join(t.TempDir(), "history.jsonl"),
		Now: func() time.Time { return h.clock }})
	h.m.onPrint = func(s string) { h.printed = append(h.printed, ansi.Strip(s)) }
	h.m.flush()
	t.Cleanup(func() { cancel(); h.m.Wait(time.Second) })
	return h, x
}

// /help lists /memory, /skills, /context and the custom commands (not one
// a REPL command hides); Tab completes them; /memory and /skills pass
// their arguments; a custom command runs as a turn with its text.
func TestExtrasHelpCompletionAndCommands(t *testing.T) {
	t.Parallel()
	h, x := newExtrasHarness(t)
	h.typeLine("/help")
	screen := h.screen()
	for _, want := range []string{"/memory", "/skills", "/context", "Custom commands", "/review       [focus]  Review the staged changes",
		"/deploy       Deploy the app (project)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("/help lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "a custom /help") {
		t.Error("/help lists a custom command a REPL command hides")
	}
	h.m.input.SetValue("/re")
	if menu := ansi.Strip(strings.Join(h.m.menuView(), "\n")); !strings.Contains(menu, "/review       Review the staged changes") {
		t.Errorf("the slash menu lacks the custom command:\n%s", menu)
	}
	h.m.input.SetValue("/rev")
	h.key("tab")
	if got := h.m.input.Value(); got != "/review " {
		t.Errorf("Tab completed /rev to %q", got)
	}
	h.m.input.SetValue("/me")
	h.key("tab")
	if got := h.m.input.Value(); got != "/memory " {
		t.Errorf("Tab completed /me to %q", got)
	}
	h.typeLine("/memory accept m1a2b3")
	h.typeLine("/skills")
	h.typeLine("/context")
	screen = h.screen()
	for _, want := range []string{"m1a2b3 → USER.md  I use tabs.", "• pdf-forms  Fills in PDF forms.", "instructions   4100 bytes"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Join(x.memArgs, " ") != "accept m1a2b3" || len(x.skillArgs) != 0 {
		t.Errorf("memory args %q, skills args %q", x.memArgs, x.skillArgs)
	}
	h.event(protocol.Event{Type: protocol.EventMemoryCandidate, Candidate: &protocol.MemoryCandidate{ID: "m9", File: "USER.md", Text: "I use tabs."}})
	if !strings.Contains(h.screen(), "✎ To remember (USER.md): I use tabs. — /memory accept m9") {
		t.Errorf("the candidate is not shown:\n%s", h.screen())
	}
	h.typeLine("/review error handling")
	deadline := time.Now().Add(2 * time.Second)
	for {
		h.b.mu.Lock()
		runs := append([]string(nil), h.b.runs...)
		h.b.mu.Unlock()
		if len(runs) == 1 {
			if runs[0] != "/review error handling" {
				t.Errorf("the custom command ran %q", runs[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the custom command did not start a turn")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
