package server

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// deadOwner returns a lease owner of this host whose process has ended,
// as a worker killed with SIGKILL leaves behind.
func deadOwner(t *testing.T) string {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("cannot run true to get the pid of an ended process: %v", err)
	}
	return fmt.Sprintf("%s:%d:deadbeef", store.Hostname(), c.ProcessState.Pid())
}

// leaveBehind makes the session look as a killed worker leaves it: the
// records of a turn in progress (msgs, status running unless idle is
// set), messages queued behind it, and its lease, held by a dead process.
func (f *fixture) leaveBehind(id string, idle bool, msgs []*protocol.Message, queued ...string) {
	f.t.Helper()
	ctx := context.Background()
	st := f.app.Store
	sess, err := st.GetSession(ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	if !idle {
		sess.Status = protocol.StatusRunning
	}
	evs := []*protocol.Event{{Type: protocol.EventTurnStarted, SessionID: id, TurnID: "dead-turn"}}
	if err := st.AppendBatch(ctx, id, store.Batch{UpdateSession: sess, Messages: msgs, Events: evs}); err != nil {
		f.t.Fatal(err)
	}
	for _, q := range queued {
		if _, err := st.EnqueueInput(ctx, id, q); err != nil {
			f.t.Fatal(err)
		}
	}
	if _, err := st.AcquireLease(ctx, id, deadOwner(f.t.(*testing.T)), time.Hour); err != nil {
		f.t.Fatal(err)
	}
}

// userContents returns the session's stored user messages.
func (f *fixture) userContents(id string) []string {
	f.t.Helper()
	msgs, err := f.app.Store.Messages(context.Background(), id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.Role == protocol.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// storedOf returns the session's stored events of type typ.
func (f *fixture) storedOf(id string, typ protocol.EventType) []protocol.Event {
	f.t.Helper()
	evs, err := f.app.Store.Events(context.Background(), id, 0, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []protocol.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// interruptedCall is a turn a worker was killed in while a tool call ran:
// the user's message and the model's call, with no result stored.
func interruptedCall() []*protocol.Message {
	return []*protocol.Message{
		{Role: protocol.RoleUser, Content: "list the files"},
		{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "call_dead", Name: "list_files", Arguments: `{}`}}},
	}
}

// TestTakeoverResumesInterruptedTurn: a worker died while a tool call of
// its turn ran, with a message queued behind the turn. Another worker's
// takeover records the turn as failed, resumes it with Continue (the
// model is told the call was interrupted, and the session says which
// worker took over from which), then sends the queued message, once.
func TestTakeoverResumesInterruptedTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Text("resumed: the listing was interrupted"), llmtest.Text("answer to the queued one"))
	s := f.newSession()
	f.leaveBehind(s.ID, false, interruptedCall(), "queued behind the turn")

	f.srv.takeOverOnce(time.Second)
	got := f.waitIdle(s.ID)
	if got.Status != protocol.StatusIdle {
		t.Fatalf("status after takeover = %s (%s), want idle", got.Status, got.LastError)
	}
	reqs := f.llm.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the resumed turn, the queued message)", len(reqs))
	}
	var result *llmtest.ChatMessage
	for i, m := range reqs[0].Chat.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_dead" {
			result = &reqs[0].Chat.Messages[i]
		}
		if m.Role == "user" && strings.Contains(m.Content, "queued behind") {
			t.Errorf("the resumed turn's request has the queued message: it must run after the turn")
		}
	}
	if result == nil || !strings.Contains(result.Content, "interrupted") {
		t.Fatalf("resumed request's result of the interrupted call = %+v, want one saying it was interrupted", result)
	}
	if users := f.userContents(s.ID); len(users) != 2 || users[1] != "queued behind the turn" {
		t.Errorf("user messages = %q, want the first and the queued one, each once", users)
	}
	if q, _ := f.app.Store.QueuedInputs(context.Background(), s.ID); len(q) != 0 {
		t.Errorf("still queued: %+v", q)
	}
	if n := len(f.storedOf(s.ID, protocol.EventTurnFailed)); n != 1 {
		t.Errorf("%d turn.failed events, want 1: the dead worker's turn", n)
	}
	found := false
	for _, e := range f.storedOf(s.ID, protocol.EventWarning) {
		if strings.Contains(e.Text, "resumed on worker "+f.app.Core.Owner()) && strings.Contains(e.Text, ":deadbeef stopped") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning says the turn was resumed on this worker after the dead one: %+v", f.storedOf(s.ID, protocol.EventWarning))
	}
	if n := len(f.storedOf(s.ID, protocol.EventTurnCompleted)); n != 2 {
		t.Errorf("%d turn.completed events, want 2", n)
	}
	// A second round finds nothing more to do.
	f.srv.takeOverOnce(time.Second)
	f.waitIdle(s.ID)
	if n := len(f.llm.ChatRequests()); n != 2 {
		t.Errorf("%d model requests after a second takeover round, want still 2", n)
	}
}

// TestTakeoverResumeOff: with server.resumeInterrupted false the dead
// worker's turn is only recorded as failed; the queued message is sent.
func TestTakeoverResumeOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *testOptions) { o.config = `"server":{"resumeInterrupted":false}` }, llmtest.Text("answer to the queued one"))
	s := f.newSession()
	f.leaveBehind(s.ID, false, interruptedCall(), "queued behind the turn")

	f.srv.takeOverOnce(time.Second)
	f.waitIdle(s.ID)
	if n := len(f.llm.ChatRequests()); n != 1 {
		t.Fatalf("%d model requests, want 1 (the queued message only)", n)
	}
	if users := f.userContents(s.ID); len(users) != 2 || users[1] != "queued behind the turn" {
		t.Errorf("user messages = %q", users)
	}
	for _, e := range f.storedOf(s.ID, protocol.EventWarning) {
		if strings.Contains(e.Text, "resumed") {
			t.Errorf("resumed although resumeInterrupted is false: %q", e.Text)
		}
	}
}

// TestTakeoverSendsStrandedQueue: a worker died between two turns, with a
// message queued on an idle session it held. Takeover sends it, once; a
// session whose lease a live process holds keeps its queue.
func TestTakeoverSendsStrandedQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Text("answer to the stranded one"))
	dead := f.newSession()
	f.leaveBehind(dead.ID, true, []*protocol.Message{{Role: protocol.RoleUser, Content: "first"},
		{Role: protocol.RoleAssistant, Content: "first answer"}}, "stranded")
	live := f.newSession()
	ctx := context.Background()
	if _, err := f.app.Store.EnqueueInput(ctx, live.ID, "waits for the live turn"); err != nil {
		t.Fatal(err)
	}
	other := store.NewOwner() // this process: alive
	if _, err := f.app.Store.AcquireLease(ctx, live.ID, other, time.Hour); err != nil {
		t.Fatal(err)
	}

	f.srv.takeOverOnce(time.Second)
	f.waitIdle(dead.ID)
	if users := f.userContents(dead.ID); len(users) != 2 || users[1] != "stranded" {
		t.Fatalf("user messages = %q, want [first stranded]", users)
	}
	if q, _ := f.app.Store.QueuedInputs(ctx, dead.ID); len(q) != 0 {
		t.Errorf("still queued: %+v", q)
	}
	if q, _ := f.app.Store.QueuedInputs(ctx, live.ID); len(q) != 1 {
		t.Errorf("the live session's queue = %+v, want its message left for its own turn", q)
	}
	f.srv.takeOverOnce(time.Second)
	f.waitIdle(dead.ID)
	if n := len(f.llm.ChatRequests()); n != 1 {
		t.Errorf("%d model requests, want 1: the stranded message is sent once", n)
	}
}

// TestPostToInterruptedSessionRecoversItFirst: a worker died mid-turn and
// a message is posted to another worker before any takeover round ran.
// The posted message's turn takes the dead worker's lease at once
// (AcquireLease replaces a holder of this host that is gone); it must not
// go on over the interrupted turn (whose turn.started would have no end and
// whose user message no answer): the interrupted turn is recorded as
// failed and resumed, then the posted message is sent.
func TestPostToInterruptedSessionRecoversItFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Text("answer to the interrupted one"), llmtest.Text("answer to the posted one"))
	s := f.newSession()
	f.leaveBehind(s.ID, false, []*protocol.Message{{Role: protocol.RoleUser, Content: "interrupted"}})
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "posted"}, nil, http.StatusAccepted)
	for deadline := time.Now().Add(10 * time.Second); len(f.llm.ChatRequests()) < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	f.waitIdle(s.ID)
	if n := len(f.storedOf(s.ID, protocol.EventTurnFailed)); n != 1 {
		t.Errorf("%d turn.failed events, want 1: the dead worker's turn", n)
	}
	if started, ended := len(f.storedOf(s.ID, protocol.EventTurnStarted)), len(f.storedOf(s.ID, protocol.EventTurnCompleted))+len(f.storedOf(s.ID, protocol.EventTurnFailed)); started != ended {
		t.Errorf("%d turns started, %d ended", started, ended)
	}
	if reqs := f.llm.ChatRequests(); len(reqs) != 2 {
		t.Errorf("%d model requests, want 2 (the resumed turn, the posted message)", len(reqs))
	}
}
