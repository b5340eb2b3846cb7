package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/llm/openai"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
)

// fixture is a Core on a real store, talking to the fake server through
// the real adapter.
type fixture struct {
	t    *testing.T
	core *Core
	st   *store.SQLite
	srv  *llmtest.Server
	ws   string
}

func newFixture(t *testing.T, opts Options, extra ...tools.Tool) *fixture {
	t.Helper()
	return newWrappedFixture(t, opts, nil, extra...)
}

// newWrappedFixture is newFixture with the Core's store wrapped by wrap
// (nil: not wrapped); fixture.st is the store underneath.
func newWrappedFixture(t *testing.T, opts Options, wrap func(store.Store) store.Store, extra ...tools.Tool) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := llmtest.NewTestServer(t)
	reg, err := tools.NewRegistry(append(builtin.All(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	client := openai.New(openai.Config{BaseURL: srv.URL(), Retry: llm.RetryPolicy{MaxAttempts: 1}})
	opts.Store, opts.Tools = st, reg
	if wrap != nil {
		opts.Store = wrap(st)
	}
	opts.Models = func(id string) (Model, error) {
		if id != "" && id != "fake/m" {
			return Model{}, errors.New("unknown model " + id)
		}
		return Model{ID: "fake/m", Name: "m", Client: client}, nil
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, core: c, st: st, srv: srv, ws: t.TempDir()}
}

func (f *fixture) session() *protocol.Session {
	f.t.Helper()
	s, err := f.core.CreateSession(context.Background(), f.ws, "fake/m", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fixture) status(id string) protocol.SessionStatus {
	f.t.Helper()
	s, err := f.st.GetSession(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return s.Status
}

// slowTool blocks until its context ends or release is closed.
type slowTool struct {
	started chan struct{}
	release chan struct{}
}

func (s *slowTool) Info() tools.Info {
	return tools.Info{Name: "slow", Description: "Waits.", Schema: json.RawMessage(`{"type":"object"}`), Risk: tools.RiskWrite}
}
func (s *slowTool) Summary(args json.RawMessage) string { return "slow" }
func (s *slowTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	close(s.started)
	select {
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	case <-s.release:
		return tools.Result{Content: "released"}, nil
	}
}

// panicTool panics when run.
type panicTool struct{ slowTool }

func (p *panicTool) Info() tools.Info {
	info := p.slowTool.Info()
	info.Name = "boom"
	return info
}
func (*panicTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	panic("kaboom")
}

func TestTurnCompletesAndFreezesSystemPrompt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{SystemPrompt: "frozen prompt v1"})
	f.srv.Enqueue(llmtest.Text("one"), llmtest.Text("two"))
	s := f.session()
	ctx := context.Background()
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "first"}, nil); err != nil {
		t.Fatal(err)
	}
	f.core.opts.SystemPrompt = "changed prompt v2"
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "second"}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.ChatRequests()
	if got := reqs[1].Chat.Messages[0].Content; got != "frozen prompt v1" {
		t.Errorf("system prompt of the second turn %q, want the frozen one", got)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	if len(msgs) != 5 {
		t.Errorf("%d stored messages, want 5 (system, user, assistant, user, assistant)", len(msgs))
	}
	if _, err := f.st.GetLease(ctx, s.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("lease after the turn: %v, want released", err)
	}
}

func TestUserMessageStoredBeforeModelCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	s := f.session()
	var storedAtRequest atomic.Int64
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		msgs, _ := f.st.Messages(context.Background(), s.ID, 0)
		storedAtRequest.Store(int64(len(msgs)))
		return llmtest.Text("ok")
	})
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := storedAtRequest.Load(); n != 2 {
		t.Errorf("%d messages stored when the model was called, want 2 (system, user)", n)
	}
}

func TestSecondTurnInProcessRefused(t *testing.T) {
	t.Parallel()
	slow := &slowTool{started: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, Options{}, slow)
	f.srv.Enqueue(llmtest.Call("slow", `{}`), llmtest.Text("done"))
	s := f.session()
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "one"}, nil) }()
	<-slow.started
	err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "two"}, nil)
	if !errors.Is(err, ErrTurnActive) {
		t.Errorf("second turn: %v, want ErrTurnActive", err)
	}
	close(slow.release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if st := f.status(s.ID); st != protocol.StatusIdle {
		t.Errorf("status %s", st)
	}
}

func TestCancelDuringToolRecordsResult(t *testing.T) {
	t.Parallel()
	slow := &slowTool{started: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, Options{}, slow)
	f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "a", Name: "slow", Arguments: `{}`}, {ID: "b", Name: "list_dir", Arguments: `{}`}}})
	s := f.session()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "go"}, nil) }()
	<-slow.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if st := f.status(s.ID); st != protocol.StatusCancelled {
		t.Errorf("status %s, want cancelled", st)
	}
	msgs, _ := f.st.Messages(context.Background(), s.ID, 0)
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == protocol.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	if results["a"] != CancelledCallResult || results["b"] != CancelledCallResult {
		t.Errorf("results after cancel %v: every call must get one", results)
	}
}

func TestConsumerStoppingCancelsTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Reply{Text: "never ends", Hang: true})
	s := f.session()
	for ev, err := range f.core.SubmitTurn(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == protocol.EventMessageDelta {
			break
		}
	}
	if st := f.status(s.ID); st != protocol.StatusCancelled {
		t.Errorf("status %s after the consumer stopped, want cancelled", st)
	}
}

func TestLeaseLostAbortsTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{LeaseTTL: 150 * time.Millisecond})
	f.srv.Enqueue(llmtest.Reply{Text: "slow", Hang: true})
	s := f.session()
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}, nil) }()
	// Wait for the request, then let another process take the lease over.
	for len(f.srv.ChatRequests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx := context.Background()
	if err := f.st.ReleaseLease(ctx, s.ID, f.core.Owner()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AcquireLease(ctx, s.ID, "otherhost:1:abc", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Run: %v, want ErrLeaseLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("turn did not stop after losing its lease")
	}
	l, err := f.st.GetLease(ctx, s.ID)
	if err != nil || l.Owner != "otherhost:1:abc" {
		t.Errorf("lease %+v, %v: the aborted turn must not release the new owner's lease", l, err)
	}
}

func TestPanickingToolBecomesResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{}, &panicTool{})
	f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "p", Name: "boom", Arguments: `{}`}}}, llmtest.Text("ok"))
	s := f.session()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	var got string
	for _, m := range f.srv.ChatRequests()[1].Chat.Messages {
		if m.ToolCallID == "p" {
			got = m.Content
		}
	}
	if !strings.HasPrefix(got, "Tool failed: internal error in boom: kaboom") {
		t.Errorf("result %q", got)
	}
}

func TestRefusedEarlyLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	s := f.session()
	ctx := context.Background()
	err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "hi", Model: "nope/x"}, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("unknown model: %v, want *ConfigError", err)
	}
	if err := f.core.Run(ctx, TurnRequest{SessionID: "missing", Input: "hi"}, nil); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("missing session: %v", err)
	}
	if _, err := f.st.AcquireLease(ctx, s.ID, "otherhost:1:x", time.Minute); err != nil {
		t.Fatal(err)
	}
	var held *store.LeaseHeldError
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "hi"}, nil); !errors.As(err, &held) || held.Owner != "otherhost:1:x" {
		t.Errorf("lease held elsewhere: %v", err)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	if len(msgs) != 0 || len(f.srv.ChatRequests()) != 0 {
		t.Errorf("a refused turn stored %d messages and sent %d requests", len(msgs), len(f.srv.ChatRequests()))
	}
	if st := f.status(s.ID); st != protocol.StatusIdle {
		t.Errorf("status %s", st)
	}
}

// events collects a turn's events for a test, safe for concurrent reads.
type events struct {
	mu  sync.Mutex
	evs []protocol.Event
	ch  chan protocol.Event
}

func newEvents() *events { return &events{ch: make(chan protocol.Event, 256)} }

func (e *events) sink(ev protocol.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
	e.ch <- ev
}

func (e *events) waitFor(t *testing.T, typ protocol.EventType) protocol.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", typ)
		}
	}
}

func askPolicy(t *testing.T) PolicyFunc {
	return func(ctx context.Context, sess *protocol.Session) (*permission.Policy, error) {
		return permission.NewPolicy(permission.Options{Mode: permission.ModeDefault})
	}
}

func TestAskWaitAnsweredInProcessAndQueuedInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Permissions: askPolicy(t)})
	f.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}},
		llmtest.Text("written"),
		llmtest.Text("answer to the queued message"),
	)
	s := f.session()
	evs := newEvents()
	errc := make(chan error, 1)
	go func() {
		errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "write a", OnAsk: AskWait}, evs.sink)
	}()
	req := evs.waitFor(t, protocol.EventPermissionRequested)
	if st := f.status(s.ID); st != protocol.StatusWaitingForApproval {
		t.Errorf("status while waiting: %s", st)
	}
	// A message sent meanwhile is queued, not lost and not sent ahead.
	var qe *QueuedError
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "and then this"}, nil); !errors.As(err, &qe) {
		t.Fatalf("Run while waiting: %v, want *QueuedError", err)
	}
	if err := f.core.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.core.Answer(context.Background(), ResolveRequest{SessionID: s.ID, RequestID: req.RequestID, Approve: false}, nil); !errors.Is(err, ErrNoPendingApproval) {
		t.Errorf("second answer: %v, want ErrNoPendingApproval", err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(f.ws, "a.txt")); err != nil || string(got) != "hi" {
		t.Errorf("a.txt = %q, %v", got, err)
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (two steps, then the queued message)", len(reqs))
	}
	msgs := reqs[2].Chat.Messages
	if last := msgs[len(msgs)-1]; last.Role != "user" || last.Content != "and then this" {
		t.Errorf("last request ends with %+v, want the queued message", last)
	}
	if st := f.status(s.ID); st != protocol.StatusIdle {
		t.Errorf("final status %s", st)
	}
}

func TestAskWaitCancelled(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Permissions: askPolicy(t)})
	f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}})
	s := f.session()
	evs := newEvents()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "write a", OnAsk: AskWait}, evs.sink)
	}()
	evs.waitFor(t, protocol.EventPermissionRequested)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if st := f.status(s.ID); st != protocol.StatusCancelled {
		t.Errorf("status %s, want cancelled", st)
	}
	pending, _ := f.st.PendingApprovals(context.Background(), s.ID)
	if len(pending) != 0 {
		t.Errorf("%d approvals still pending after cancel", len(pending))
	}
}

func TestTurnTelemetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	f.srv.Enqueue(llmtest.Call("list_dir", `{}`), llmtest.Reply{Text: "done", ChunkDelay: 5 * time.Millisecond})
	s := f.session()
	var done protocol.Event
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, func(e protocol.Event) {
		if e.Type == protocol.EventTurnCompleted {
			done = e
		}
	}); err != nil {
		t.Fatal(err)
	}
	if done.ModelMS <= 0 || done.FirstTokenMS <= 0 || done.DurationMS < done.ModelMS || done.Usage == nil || done.Usage.InputTokens == 0 {
		t.Errorf("turn.completed telemetry %+v", done)
	}
}

func TestCalibratorLearnsFromUsage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{Catalog: func(string) catalog.Model { return catalog.Lookup("x/unknown", nil) }})
	// The provider reports twice the prompt tokens mx-claw estimates.
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{PromptTokens: req.Size / 2, CompletionTokens: 1}}
	})
	s := f.session()
	for range 3 {
		if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hello"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if r := f.core.calibrator("fake/m").Ratio(); r < 1.2 {
		t.Errorf("calibration ratio %.2f after reports of about twice the estimate", r)
	}
}
