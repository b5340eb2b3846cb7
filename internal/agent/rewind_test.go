package agent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
)

// newCheckpointFixture is a fixture whose core keeps checkpoints and has
// run_command; the workspace holds a.txt, b.txt and c.txt.
func newCheckpointFixture(t *testing.T) *fixture {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed: run_command cannot run")
	}
	mgr := checkpoint.NewManager(filepath.Join(t.TempDir(), "checkpoints"), checkpoint.Limits{}, nil)
	// Closed before the directories go: a warm-up may still be writing.
	t.Cleanup(func() { mgr.Close() })
	f := newFixture(t, Options{Checkpoints: mgr}, builtin.NewRunCommand())
	ws, err := filepath.EvalSymlinks(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	f.ws = ws
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"} {
		f.writeFile(name, text)
	}
	return f
}

func (f *fixture) writeFile(name, text string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.ws, name), []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) readFile(name string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.ws, name))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

func (f *fixture) run(sessionID, input string, sink func(protocol.Event)) {
	f.t.Helper()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: sessionID, Input: input}, sink); err != nil {
		f.t.Fatalf("turn %q: %v", input, err)
	}
}

// editSedRm queues a turn that edits a.txt with edit_file, changes b.txt
// with `sed -i` and removes c.txt with `rm`.
func (f *fixture) editSedRm() {
	f.srv.Enqueue(
		llmtest.Call("read_file", `{"path":"a.txt"}`),
		llmtest.Call("edit_file", `{"path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`),
		llmtest.Call("run_command", `{"command":"sed -i 's/beta/BETA/' b.txt"}`),
		llmtest.Call("run_command", `{"command":"rm c.txt"}`),
		llmtest.Text("done"),
	)
}

func TestUndoEditSedRm(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	f.editSedRm()
	var changed []string
	f.run(s.ID, "change things", func(e protocol.Event) {
		if e.Type == protocol.EventToolCompleted {
			for _, c := range e.Changes {
				changed = append(changed, e.ToolName+": "+c.Kind()+" "+c.Path)
			}
		}
	})
	want := []string{"edit_file: modified a.txt", "run_command: modified b.txt", "run_command: deleted c.txt"}
	if !slices.Equal(changed, want) {
		t.Errorf("tool.completed changes = %v, want %v", changed, want)
	}
	if f.readFile("a.txt") != "ALPHA\n" || f.readFile("b.txt") != "BETA\n" || f.readFile("c.txt") != "<missing>" {
		t.Fatalf("the turn did not change the files: %q %q %q", f.readFile("a.txt"), f.readFile("b.txt"), f.readFile("c.txt"))
	}
	var restored *protocol.Event
	res, err := f.core.Undo(context.Background(), s.ID, checkpoint.Leave, func(e protocol.Event) { restored = &e })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Restored, []string{"a.txt", "b.txt", "c.txt"}) || len(res.Conflicts) > 0 {
		t.Errorf("undo = %+v", res)
	}
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"} {
		if got := f.readFile(name); got != text {
			t.Errorf("%s = %q after undo, want %q", name, got, text)
		}
	}
	if restored == nil || restored.Type != protocol.EventCheckpointRestored || restored.Sequence == 0 {
		t.Errorf("event = %+v", restored)
	}
	// The model is told, in the transcript, before its next request.
	msgs, _ := f.st.Messages(context.Background(), s.ID, 0)
	if last := msgs[len(msgs)-1]; last.Role != protocol.RoleSystem || !strings.Contains(last.Content, "a.txt, b.txt, c.txt") {
		t.Errorf("last message = %+v", last)
	}
	if _, err := f.core.Undo(context.Background(), s.ID, checkpoint.Leave, nil); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("second undo: %v", err)
	}
}

func TestUndoConflict(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	f.editSedRm()
	f.run(s.ID, "change things", nil)
	f.writeFile("b.txt", "BETA, and the user's own line\n")
	res, err := f.core.Undo(context.Background(), s.ID, checkpoint.Leave, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Restored, []string{"a.txt", "c.txt"}) || !slices.Equal(res.Conflicts, []string{"b.txt"}) {
		t.Errorf("undo = %+v", res)
	}
	if got := f.readFile("b.txt"); got != "BETA, and the user's own line\n" {
		t.Errorf("b.txt was touched: %q", got)
	}
	if f.readFile("a.txt") != "alpha\n" || f.readFile("c.txt") != "gamma\n" {
		t.Errorf("a.txt = %q, c.txt = %q", f.readFile("a.txt"), f.readFile("c.txt"))
	}
	// Undo again: the same turn, only its conflict is left.
	res, err = f.core.Undo(context.Background(), s.ID, checkpoint.Leave, nil)
	if err != nil || len(res.Restored) != 0 || !slices.Equal(res.Conflicts, []string{"b.txt"}) {
		t.Errorf("second undo = %+v, %v", res, err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		res, err = f.core.Undo(context.Background(), s.ID, checkpoint.Merge, nil)
		if err != nil || !slices.Equal(res.Merged, []string{"b.txt"}) || !slices.Equal(res.MergeConflicts, []string{"b.txt"}) {
			t.Errorf("merge = %+v, %v", res, err)
		}
		if got := f.readFile("b.txt"); !strings.Contains(got, "<<<<<<< yours") {
			t.Errorf("merged b.txt = %q", got)
		}
	} else {
		res, err = f.core.Undo(context.Background(), s.ID, checkpoint.Keep, nil)
		if err != nil || !slices.Equal(res.Kept, []string{"b.txt"}) {
			t.Errorf("keep = %+v, %v", res, err)
		}
	}
	if _, err := f.core.Undo(context.Background(), s.ID, checkpoint.Leave, nil); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("undo after the conflict was settled: %v", err)
	}
}

func TestReadOnlyCommandTakesNoCheckpoint(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	f.srv.Enqueue(llmtest.Call("run_command", `{"command":"cat a.txt | wc -l"}`), llmtest.Text("done"))
	f.run(s.ID, "count", nil)
	st, err := f.core.opts.Checkpoints.For(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Stats().Snapshots; n != 0 {
		t.Errorf("a read-only command took %d whole-workspace checkpoints", n)
	}
}

// threeTurns runs three turns, each creating one file, and returns the
// Seq of each user message.
func (f *fixture) threeTurns(sessionID string) []int64 {
	f.t.Helper()
	for i, name := range []string{"one.txt", "two.txt", "three.txt"} {
		f.srv.Enqueue(llmtest.Call("write_file", `{"path":"`+name+`","content":"`+name+`"}`), llmtest.Text("wrote "+name))
		f.run(sessionID, "message "+string(rune('1'+i)), nil)
	}
	var seqs []int64
	msgs, _ := f.st.Messages(context.Background(), sessionID, 0)
	for _, m := range msgs {
		if m.Role == protocol.RoleUser {
			seqs = append(seqs, m.Seq)
		}
	}
	if len(seqs) != 3 {
		f.t.Fatalf("user messages at %v", seqs)
	}
	return seqs
}

// userTexts lists the user messages of a request.
func userTexts(req llmtest.Request) []string {
	var out []string
	for _, m := range req.Chat.Messages {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestRewindToSecondOfThree(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	seqs := f.threeTurns(s.ID)
	tl, err := f.core.Timeline(context.Background(), s.ID)
	if err != nil || len(tl) != 3 || len(tl[1].Changes) != 1 || tl[1].Changes[0].Path != "two.txt" {
		t.Fatalf("timeline = %+v, %v", tl, err)
	}
	var evs []protocol.EventType
	res, err := f.core.Rewind(context.Background(), s.ID, seqs[1], RewindOptions{Files: true, Conversation: true},
		func(e protocol.Event) { evs = append(evs, e.Type) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Restored, []string{"three.txt", "two.txt"}) {
		t.Errorf("rewind = %+v", res)
	}
	if f.readFile("one.txt") != "one.txt" || f.readFile("two.txt") != "<missing>" || f.readFile("three.txt") != "<missing>" {
		t.Errorf("files after rewind: %q %q %q", f.readFile("one.txt"), f.readFile("two.txt"), f.readFile("three.txt"))
	}
	if !slices.Equal(evs, []protocol.EventType{protocol.EventCheckpointRestored, protocol.EventConversationRewound}) {
		t.Errorf("events = %v", evs)
	}
	// The next request holds the first exchange and the new message only;
	// the store keeps everything.
	f.srv.Enqueue(llmtest.Text("fresh start"))
	f.run(s.ID, "message 2, reworded", nil)
	reqs := f.srv.ChatRequests()
	if got := userTexts(reqs[len(reqs)-1]); !slices.Equal(got, []string{"message 1", "message 2, reworded"}) {
		t.Errorf("user messages sent = %v", got)
	}
	all, _ := f.st.Messages(context.Background(), s.ID, 0)
	var stored []string
	for _, m := range all {
		if m.Role == protocol.RoleUser {
			stored = append(stored, m.Content)
		}
	}
	if len(stored) != 4 {
		t.Errorf("stored user messages = %v", stored)
	}
	// Rewinding to a message the view no longer has is refused.
	var nu *NotUserMessageError
	if _, err := f.core.Rewind(context.Background(), s.ID, seqs[2], RewindOptions{Conversation: true}, nil); !errors.As(err, &nu) {
		t.Errorf("rewind to a hidden message: %v", err)
	}
}

func TestRewindConversationOnly(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	seqs := f.threeTurns(s.ID)
	if _, err := f.core.Rewind(context.Background(), s.ID, seqs[2], RewindOptions{Conversation: true}, nil); err != nil {
		t.Fatal(err)
	}
	if f.readFile("three.txt") != "three.txt" {
		t.Error("a conversation rewind touched the files")
	}
	f.srv.Enqueue(llmtest.Text("ok"))
	f.run(s.ID, "next", nil)
	reqs := f.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	if got := userTexts(last); !slices.Equal(got, []string{"message 1", "message 2", "next"}) {
		t.Errorf("user messages sent = %v", got)
	}
	found := false
	for _, m := range last.Chat.Messages {
		if m.Role == "system" && strings.Contains(m.Content, "files were left as they are now") {
			found = true
		}
	}
	if !found {
		t.Error("the model was not told the files were kept")
	}
}

func TestForkAtMessage(t *testing.T) {
	t.Parallel()
	f := newCheckpointFixture(t)
	s := f.session()
	seqs := f.threeTurns(s.ID)
	fork, err := f.core.Fork(context.Background(), s.ID, seqs[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if fork.ParentID != s.ID || fork.ID == s.ID || !strings.HasPrefix(fork.Title, "Fork of ") {
		t.Errorf("fork = %+v", fork)
	}
	msgs, _ := f.st.Messages(context.Background(), fork.ID, 0)
	if n := len(msgs); n == 0 || msgs[n-1].Role != protocol.RoleAssistant || msgs[n-1].Content != "wrote one.txt" {
		t.Fatalf("fork transcript ends with %+v", msgs[len(msgs)-1])
	}
	f.srv.Enqueue(llmtest.Text("forked"))
	f.run(fork.ID, "another way", nil)
	reqs := f.srv.ChatRequests()
	if got := userTexts(reqs[len(reqs)-1]); !slices.Equal(got, []string{"message 1", "another way"}) {
		t.Errorf("fork sent user messages %v", got)
	}
	// The source is untouched; a whole fork copies everything.
	whole, err := f.core.Fork(context.Background(), s.ID, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := f.st.Messages(context.Background(), s.ID, 0)
	copied, _ := f.st.Messages(context.Background(), whole.ID, 0)
	if len(copied) != len(src) {
		t.Errorf("whole fork has %d messages, source %d", len(copied), len(src))
	}
	if _, err := f.core.Fork(context.Background(), s.ID, seqs[1]+1, nil); err == nil {
		t.Error("fork at a message that is not the user's was accepted")
	}
}
