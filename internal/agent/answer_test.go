package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// otherProcess is a second Core on the fixture's store, as another
// process on the same home would have: its own owner, its own waiters.
func (f *fixture) otherProcess() *Core {
	f.t.Helper()
	o := f.core.opts
	o.Owner = store.NewOwner()
	c, err := New(o)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// An approval a turn waits for in one process (the REPL) is answered from
// another (a server, `mx-claw approve`): the answer is stored, the waiting
// turn takes it and goes on in its own process, its permission.resolved
// says who answered, and nobody can answer again.
func TestAskWaitAnsweredFromAnotherProcess(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Permissions: askPolicy(t)})
	f.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}},
		llmtest.Text("written"),
	)
	s := f.session()
	evs := newEvents()
	errc := make(chan error, 1)
	go func() {
		errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "write a", OnAsk: AskWait}, evs.sink)
	}()
	req := evs.waitFor(t, protocol.EventPermissionRequested)
	other := f.otherProcess()
	pending, _ := f.st.PendingApprovals(context.Background(), s.ID)
	if len(pending) != 1 || !other.WaitsElsewhere(context.Background(), pending[0]) || f.core.WaitsElsewhere(context.Background(), pending[0]) {
		t.Fatalf("the approval %+v does not name its waiting turn", pending)
	}
	var elsewhere []protocol.Event
	if err := other.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: true,
		Scope: "session", By: "the web panel"}, func(e protocol.Event) { elsewhere = append(elsewhere, e) }); err != nil {
		t.Fatalf("answer from another process: %v", err)
	}
	resolved := evs.waitFor(t, protocol.EventPermissionResolved)
	if resolved.AnsweredBy != "the web panel" || resolved.OK == nil || !*resolved.OK {
		t.Errorf("permission.resolved %+v, want approved by the web panel", resolved)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if len(elsewhere) != 0 {
		t.Errorf("the answering process ran the turn: %v", elsewhere)
	}
	if got, err := os.ReadFile(filepath.Join(f.ws, "a.txt")); err != nil || string(got) != "hi" {
		t.Errorf("a.txt = %q, %v", got, err)
	}
	if g, _ := f.st.Grants(context.Background(), "session:"+s.ID); len(g) != 1 {
		t.Errorf("the session-scope answer saved %v, want one grant", g)
	}
	for _, c := range []*Core{f.core, other} {
		if err := c.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID}, nil); !errors.Is(err, ErrNoPendingApproval) {
			t.Errorf("a second answer: %v, want ErrNoPendingApproval", err)
		}
	}
	if st := f.status(s.ID); st != protocol.StatusIdle {
		t.Errorf("final status %s", st)
	}
}

// Two answers at once, one in the waiting process and one in another:
// exactly one is taken, and the turn does what it said.
func TestAskWaitFirstAnswerWins(t *testing.T) {
	t.Parallel()
	for range 3 {
		f := newFixture(t, Options{Permissions: askPolicy(t)})
		f.srv.Enqueue(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}},
			llmtest.Text("done"),
		)
		s := f.session()
		evs := newEvents()
		errc := make(chan error, 1)
		go func() {
			errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "write a", OnAsk: AskWait}, evs.sink)
		}()
		req := evs.waitFor(t, protocol.EventPermissionRequested)
		other := f.otherProcess()
		local, remote := make(chan error, 1), make(chan error, 1)
		go func() {
			local <- f.core.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: true}, nil)
		}()
		go func() {
			remote <- other.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: false,
				Feedback: "no", By: "mx-claw approve"}, nil)
		}()
		lerr, rerr := <-local, <-remote
		if (lerr == nil) == (rerr == nil) {
			t.Fatalf("local answer: %v, remote answer: %v; want exactly one taken", lerr, rerr)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(filepath.Join(f.ws, "a.txt"))
		if written := statErr == nil; written != (lerr == nil) {
			t.Errorf("local won: %v, file written: %v", lerr == nil, written)
		}
		resolved := 0
		for _, e := range evs.evs {
			if e.Type == protocol.EventPermissionResolved {
				resolved++
				if (e.AnsweredBy == "mx-claw approve") != (rerr == nil) {
					t.Errorf("permission.resolved by %q; the remote answer won: %v", e.AnsweredBy, rerr == nil)
				}
			}
		}
		if resolved != 1 {
			t.Errorf("%d permission.resolved events, want 1", resolved)
		}
	}
}
