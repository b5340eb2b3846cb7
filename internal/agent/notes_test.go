package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// switchable is a permission mode and a clock a test changes between
// turns.
type switchable struct {
	mu   sync.Mutex
	mode permission.Mode
	now  time.Time
}

func (s *switchable) set(mode permission.Mode, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode, s.now = mode, now
}

func (s *switchable) options() Options {
	return Options{
		Permissions: func(context.Context, *protocol.Session) (*permission.Policy, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return permission.NewPolicy(permission.Options{Mode: s.mode})
		},
		Now: func() time.Time {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.now
		},
	}
}

// notes returns the environment notes of a request's messages, and
// whether each is right before the request's last (user) message.
func notes(msgs []llmtest.ChatMessage) (texts []string, lastBeforeUser bool) {
	for i, m := range msgs {
		if m.Role == "system" && strings.HasPrefix(m.Content, updateOpen) {
			texts = append(texts, m.Content)
			lastBeforeUser = i == len(msgs)-2 && msgs[i+1].Role == "user"
		}
	}
	return texts, lastBeforeUser
}

// The system prompt carries the environment and stays byte for byte the
// same for the whole session; a change of mode or date comes as one note
// before the next user message, and only once.
func TestEnvironmentChangesComeAsNotes(t *testing.T) {
	t.Parallel()
	sw := &switchable{}
	day := time.Date(2026, 12, 1, 23, 0, 0, 0, time.Local)
	sw.set(permission.ModeDefault, day)
	f := newFixture(t, sw.options())
	s := f.session()
	ctx := context.Background()
	turn := func(input string) llmtest.Request {
		t.Helper()
		f.srv.Enqueue(llmtest.Text("ok"))
		if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: input, OnAsk: AskWait}, nil); err != nil {
			t.Fatal(err)
		}
		reqs := f.srv.ChatRequests()
		return reqs[len(reqs)-1]
	}

	first := turn("one")
	prompt := first.Chat.Messages[0].Content
	for _, want := range []string{envOpen, "- Workspace: " + mustReal(t, f.ws) + ".", "- Date: 2026-12-01 (Tuesday).",
		"- Permission mode: default.", "- Approvals: interactive.", "- Sandbox: none.", "- Model: you are fake/m;", "- Git: not a git repository."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, prompt)
		}
	}

	check := func(req llmtest.Request, wantNotes int, wantLast []string) {
		t.Helper()
		if got := req.Chat.Messages[0].Content; got != prompt {
			t.Fatalf("the system prompt changed:\n%s", got)
		}
		texts, last := notes(req.Chat.Messages)
		if len(texts) != wantNotes {
			t.Fatalf("%d notes, want %d: %q", len(texts), wantNotes, texts)
		}
		if wantLast == nil {
			return
		}
		if !last {
			t.Error("the new note is not right before the user's message")
		}
		lines := strings.Split(strings.TrimSpace(texts[len(texts)-1]), "\n")
		if len(lines) != len(wantLast)+2 {
			t.Fatalf("note %q, want lines starting %q", texts[len(texts)-1], wantLast)
		}
		for i, w := range wantLast {
			if !strings.HasPrefix(lines[i+1], w) {
				t.Errorf("note line %q, want it to start with %q", lines[i+1], w)
			}
		}
	}
	check(turn("two"), 0, nil)

	sw.set(permission.ModePlan, day)
	check(turn("three"), 1, []string{"- Permission mode: plan (read-only)."})
	check(turn("four"), 1, nil)

	sw.set(permission.ModePlan, day.Add(2*time.Hour))
	check(turn("five"), 2, []string{"- Date: 2026-12-02 (Wednesday)."})

	sw.set(permission.ModeAcceptEdits, day.Add(26*time.Hour))
	check(turn("six"), 3, []string{"- Date: 2026-12-03", "- Permission mode: acceptEdits."})
	check(turn("seven"), 3, nil)
}

func mustReal(t *testing.T, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// A prompt given by the embedder has no environment block, and its
// session gets no notes.
func TestCustomPromptGetsNoNotes(t *testing.T) {
	t.Parallel()
	sw := &switchable{}
	sw.set(permission.ModeDefault, time.Now())
	opts := sw.options()
	opts.SystemPrompt = "custom"
	f := newFixture(t, opts)
	s := f.session()
	for i, mode := range []permission.Mode{permission.ModeDefault, permission.ModePlan} {
		sw.set(mode, time.Now())
		f.srv.Enqueue(llmtest.Text("ok"))
		if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}, nil); err != nil {
			t.Fatal(err)
		}
		req := f.srv.ChatRequests()[i]
		if req.Chat.Messages[0].Content != "custom" {
			t.Fatalf("system prompt %q, want the custom one", req.Chat.Messages[0].Content)
		}
		if texts, _ := notes(req.Chat.Messages); len(texts) != 0 {
			t.Errorf("turn %d got notes %q", i, texts)
		}
	}
}

// What the model was told is read from its view: a note a compaction
// summary replaced no longer counts, so the change is told again.
func TestToldFactsFollowTheView(t *testing.T) {
	t.Parallel()
	e := goldenEnv(t.TempDir(), permission.ModeDefault)
	e.Git = nil
	history := []protocol.Message{
		{Seq: 1, Role: protocol.RoleSystem, Content: BuildPrompt(e).Text()},
		{Seq: 2, Role: protocol.RoleSystem, Content: "# AGENTS.md from .\n\n- Permission mode: plan\n"},
		{Seq: 3, Role: protocol.RoleUser, Content: "hi"},
	}
	plan := *e
	plan.Mode = permission.ModePlan
	note := environmentNote(mustTold(t, history, 0), plan.facts())
	if !strings.Contains(note, "- Permission mode: plan (read-only).") || strings.Contains(note, "- Date:") {
		t.Fatalf("note %q, want the mode line alone (AGENTS.md text does not count)", note)
	}
	history = append(history, protocol.Message{Seq: 4, Role: protocol.RoleSystem, Content: note},
		protocol.Message{Seq: 5, Role: protocol.RoleUser, Content: "go on"})
	if n := environmentNote(mustTold(t, history, 0), plan.facts()); n != "" {
		t.Errorf("after the note, nothing changed, but got %q", n)
	}
	if n := environmentNote(mustTold(t, history, 4), plan.facts()); n != note {
		t.Errorf("with the note compacted away, got %q, want it again", n)
	}
	if _, ok := toldFacts([]protocol.Message{{Role: protocol.RoleSystem, Content: "custom"}}, 0); ok {
		t.Error("a prompt without an environment block counts as told")
	}
}

func mustTold(t *testing.T, history []protocol.Message, upTo int64) map[string]string {
	t.Helper()
	told, ok := toldFacts(history, upTo)
	if !ok {
		t.Fatal("no environment block found")
	}
	return told
}

// A compaction in the middle of a turn summarises the note told at its
// start; the note is told again right after, so the model does not work
// on from the system prompt's stale line (and the prompt itself is kept
// byte for byte).
func TestCompactionRetellsEnvironmentNote(t *testing.T) {
	t.Parallel()
	sw := &switchable{}
	day := time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)
	sw.set(permission.ModeDefault, day)
	opts := sw.options()
	opts.Catalog = func(id string) catalog.Model {
		m := catalog.Lookup(id, nil)
		m.ContextWindow, m.MaxOutput = 12000, 1000
		return m
	}
	opts.MaxIterations = 20
	f := newFixture(t, opts)
	for i := range 10 {
		if err := os.WriteFile(filepath.Join(f.ws, fmt.Sprintf("f%d.txt", i)), bytes.Repeat([]byte("a line of some file text\n"), 240), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := f.session()
	ctx := context.Background()
	f.srv.Enqueue(llmtest.Text("ok"))
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "one"}, nil); err != nil {
		t.Fatal(err)
	}
	prompt := f.srv.ChatRequests()[0].Chat.Messages[0].Content

	sw.set(permission.ModePlan, day)
	var mu sync.Mutex
	step := 0
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if len(req.Chat.Tools) == 0 {
			return llmtest.Text("SUMMARY of the reading so far")
		}
		mu.Lock()
		defer mu.Unlock()
		if step++; step > 10 {
			return llmtest.Text("done")
		}
		return llmtest.Call("read_file", fmt.Sprintf(`{"path":"f%d.txt"}`, step-1))
	})
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "read them all"}, nil); err != nil {
		t.Fatal(err)
	}
	compacted := false
	for _, req := range f.srv.ChatRequests()[1:] {
		if len(req.Chat.Tools) == 0 {
			compacted = true
			continue
		}
		if req.Chat.Messages[0].Content != prompt {
			t.Fatal("the system prompt changed")
		}
		texts, _ := notes(req.Chat.Messages)
		if len(texts) == 0 || !strings.Contains(texts[len(texts)-1], "- Permission mode: plan") {
			t.Fatalf("a request (compacted before it: %v) lacks the note of the mode change: %q", compacted, texts)
		}
	}
	if !compacted {
		t.Fatal("the turn never compacted")
	}
}
