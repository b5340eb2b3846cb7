package tui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// travelBackend is a fakeBackend with the time-travel commands.
type travelBackend struct {
	*fakeBackend
	mu      sync.Mutex
	undos   []string
	rewinds []string
}

func (b *travelBackend) Undo(_ context.Context, sid, conflicts string) (*protocol.Restore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.undos = append(b.undos, sid+" "+conflicts)
	if len(b.undos) > 1 {
		return nil, nil
	}
	return &protocol.Restore{Restored: []string{"a.go", "c.go"}, Conflicts: []string{"b.go"}}, nil
}

func (b *travelBackend) Timeline(context.Context, string) ([]protocol.Message, []protocol.ChangeRecord, error) {
	file := func(path string, created bool) protocol.FileChange {
		c := protocol.FileChange{Path: path, After: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "1"}}
		if !created {
			c.Before = protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "0"}
		}
		return c
	}
	return []protocol.Message{
			{Seq: 2, Role: protocol.RoleUser, Content: "first message"},
			{Seq: 5, Role: protocol.RoleUser, Content: "second message"},
			{Seq: 9, Role: protocol.RoleUser, Content: "third message"},
		}, []protocol.ChangeRecord{
			{MessageSeq: 4, FileChange: file("one.go", true)},
			{MessageSeq: 7, FileChange: file("two.go", true)},
			{MessageSeq: 8, FileChange: file("main.go", false)},
		}, nil
}

func (b *travelBackend) Rewind(_ context.Context, sid string, seq int64, files, conv bool, _ string) (*protocol.Restore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rewinds = append(b.rewinds, strings.Join([]string{sid, strconv.FormatInt(seq, 10), yes(files), yes(conv)}, " "))
	return &protocol.Restore{ToSeq: seq, Restored: []string{"main.go", "two.go"}}, nil
}

func (b *travelBackend) SearchSessions(_ context.Context, q string) ([]protocol.SearchHit, error) {
	return []protocol.SearchHit{{SessionID: "abcdabcdabcdabcd", Title: "parser work", Snippet: "the **" + q + "** is here", UpdatedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}}, nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func newTravelHarness(t *testing.T) (*harness, *travelBackend) {
	h := newHarness(t, 100, 30)
	b := &travelBackend{fakeBackend: h.b}
	h.m.backend = b
	return h, b
}

func TestUndoCommand(t *testing.T) {
	h, b := newTravelHarness(t)
	h.typeLine("/undo")
	screen := h.screen()
	for _, want := range []string{"Undid the file changes of the last turn.", "Restored:\n  a.go\n  c.go",
		"left as they are:\n  b.go", "/undo merge takes the agent's change out"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	h.typeLine("/undo keep")
	if !strings.Contains(h.screen(), "Nothing to undo in this session.") {
		t.Errorf("second undo:\n%s", h.screen())
	}
	if len(b.undos) != 2 || b.undos[1] != "5e55101d00000001 keep" {
		t.Errorf("undos = %q", b.undos)
	}
	// The plain backend has no such command.
	h2 := newHarness(t, 100, 30)
	h2.typeLine("/rewind")
	if !strings.Contains(h2.screen(), "/rewind is not available here.") {
		t.Errorf("plain backend:\n%s", h2.screen())
	}
}

// deliver passes the next prompt sent on ch to the Model.
func deliver(t *testing.T, h *harness, ch chan tea.Msg) {
	t.Helper()
	select {
	case msg := <-ch:
		h.send(msg)
	case <-time.After(2 * time.Second):
		t.Fatal("no prompt")
	}
}

func TestRewindMenu(t *testing.T) {
	h, b := newTravelHarness(t)
	ch := make(chan tea.Msg, 1)
	p := uiPrompter{events: ch}
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := h.m.rewindMenu(context.Background(), b, p, h.m.sess.ID, "")
		done <- result{text, err}
	}()
	deliver(t, h, ch)
	live := ansi.Strip(h.m.View().Content)
	for _, want := range []string{"Go back to before which message?", "#9  third message", "#5  second message  · 2 files changed (1 created)",
		"#2  first message  · 1 file changed (1 created)"} {
		if !strings.Contains(live, want) {
			t.Errorf("menu lacks %q:\n%s", want, live)
		}
	}
	// Newest first: one down is the second message.
	h.typeKeys("down", "enter")
	deliver(t, h, ch)
	if live := ansi.Strip(h.m.View().Content); !strings.Contains(live, "Conversation only") {
		t.Errorf("second menu:\n%s", live)
	}
	h.typeKeys("enter")
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the menu did not finish")
	}
	r.text = ansi.Strip(r.text)
	if r.err != nil || !strings.Contains(r.text, "Conversation taken back to before message #5") ||
		!strings.Contains(r.text, "It was: second message") || !strings.Contains(r.text, "Restored:\n  main.go\n  two.go") {
		t.Errorf("result = %q, %v", r.text, r.err)
	}
	if len(b.rewinds) != 1 || b.rewinds[0] != "5e55101d00000001 5 yes yes" {
		t.Errorf("rewinds = %q", b.rewinds)
	}
}

func TestSessionsSearchCommand(t *testing.T) {
	h, _ := newTravelHarness(t)
	ch := make(chan tea.Msg, 1)
	h.m.events = ch
	cmds := h.m.searchSessions("quokka")
	got := make(chan tea.Msg, 1)
	go func() { got <- cmds[0]() }()
	deliver(t, h, ch)
	if live := ansi.Strip(h.m.View().Content); !strings.Contains(live, "parser work — the **quokka** is here") {
		t.Errorf("hits:\n%s", live)
	}
	h.typeKeys("enter")
	select {
	case msg := <-got:
		sm, ok := msg.(sessionMsg)
		if !ok || sm.sess.ID != "abcdabcdabcdabcd" {
			t.Errorf("picked %#v", msg)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no session picked")
	}
}

func TestToolCardSaysWhatChanged(t *testing.T) {
	h, _ := newTravelHarness(t)
	ok := true
	h.event(protocol.Event{Type: protocol.EventToolStarted, ToolCallID: "c1", ToolName: "run_command", Summary: "Run make gen"})
	h.event(protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: "c1", ToolName: "run_command", Summary: "Run make gen", OK: &ok,
		Changes: []protocol.FileChange{
			{Path: "gen/a.go", After: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "1"}},
			{Path: "gen", After: protocol.FileState{Mode: protocol.ModeDir | 0o755}},
			{Path: "old.go", Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "2"}},
		}})
	if !strings.Contains(h.screen(), "↳ 2 files changed (1 created, 1 deleted): gen/a.go, old.go  (/undo puts them back)") {
		t.Errorf("screen:\n%s", h.screen())
	}
}

func TestReplayShowsUndoAndRewind(t *testing.T) {
	h, _ := newTravelHarness(t)
	h.m.replay([]protocol.Event{
		{Type: protocol.EventCheckpointRestored, Restore: &protocol.Restore{Restored: []string{"a.go"}, Conflicts: []string{"b.go"}}},
		{Type: protocol.EventConversationRewound, Restore: &protocol.Restore{ToSeq: 5}},
	})
	h.m.flush()
	s := h.screen()
	for _, want := range []string{"↶ Files put back a.go; left as changed b.go", "Conversation taken back to before message #5"} {
		if !strings.Contains(s, want) {
			t.Errorf("replay lacks %q:\n%s", want, s)
		}
	}
}
