// Tests of what one step writes, when, and in what order: the answer
// stored with its first tool.started, read-only calls running while that
// is stored, the client warmed before the first request.

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// batchLog is a store that remembers every batch it is given.
type batchLog struct {
	store.Store
	mu      sync.Mutex
	batches []store.Batch
}

func (b *batchLog) AppendBatch(ctx context.Context, sessionID string, batch store.Batch) error {
	b.mu.Lock()
	b.batches = append(b.batches, batch)
	b.mu.Unlock()
	return b.Store.AppendBatch(ctx, sessionID, batch)
}

// probeTool checks, when it runs, that the answer that asked for it and
// its tool.started are already in the store.
type probeTool struct {
	st  store.Store
	err error
}

func (p *probeTool) Info() tools.Info {
	return tools.Info{Name: "probe", Description: "Looks at the store.", Schema: json.RawMessage(`{"type":"object"}`), Risk: tools.RiskWrite}
}
func (p *probeTool) Summary(args json.RawMessage) string { return "probe" }
func (p *probeTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	p.err = func() error {
		msgs, err := p.st.Messages(ctx, env.SessionID, 0)
		if err != nil {
			return err
		}
		last := msgs[len(msgs)-1]
		if last.Role != protocol.RoleAssistant || len(last.ToolCalls) != 1 || last.ToolCalls[0].Name != "probe" {
			return fmt.Errorf("last stored message is %+v, want the answer calling probe", last)
		}
		evs, err := p.st.Events(ctx, env.SessionID, 0, 0)
		if err != nil {
			return err
		}
		if e := evs[len(evs)-1]; e.Type != protocol.EventToolStarted || e.ToolCallID != last.ToolCalls[0].ID {
			return fmt.Errorf("last stored event is %s, want tool.started of the call", e.Type)
		}
		return nil
	}()
	return tools.Result{Content: "looked"}, nil
}

// TestAnswerStoredWithToolStartedBeforeToolRuns: an answer with tool calls
// is stored in the same transaction as its first call's tool.started, and
// both are in the store before the tool runs.
func TestAnswerStoredWithToolStartedBeforeToolRuns(t *testing.T) {
	t.Parallel()
	log := &batchLog{}
	probe := &probeTool{}
	f := newWrappedFixture(t, Options{}, func(st store.Store) store.Store {
		log.Store, probe.st = st, st
		return log
	}, probe)
	s := f.session()
	f.srv.Enqueue(llmtest.Call("probe", `{}`), llmtest.Text("done"))
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "look"}, nil); err != nil {
		t.Fatal(err)
	}
	if probe.err != nil {
		t.Fatalf("when the tool ran: %v", probe.err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	found := false
	for _, b := range log.batches {
		for _, m := range b.Messages {
			if m.Role != protocol.RoleAssistant || len(m.ToolCalls) == 0 {
				continue
			}
			found = true
			var types []protocol.EventType
			for _, e := range b.Events {
				types = append(types, e.Type)
			}
			if n := len(types); n == 0 || types[n-1] != protocol.EventToolStarted {
				t.Errorf("the answer with tool calls was stored with events %v; want its tool.started in the same batch", types)
			}
		}
	}
	if !found {
		t.Fatal("no batch held the answer with tool calls")
	}
}

// warmCounter counts Warm calls.
type warmCounter struct {
	llm.Client
	n atomic.Int32
}

func (w *warmCounter) Warm() { w.n.Add(1) }

// TestTurnWarmsClient: a turn tells a client that can get ready that a
// request is coming, before it sends one.
func TestTurnWarmsClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	models := f.core.opts.Models
	var w *warmCounter
	f.core.opts.Models = func(id string) (Model, error) {
		m, err := models(id)
		if w == nil {
			w = &warmCounter{Client: m.Client}
		}
		m.Client = w
		return m, err
	}
	s := f.session()
	var warmedAtRequest atomic.Int32
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		warmedAtRequest.Store(w.n.Load())
		return llmtest.Text("ok")
	})
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	if warmedAtRequest.Load() != 1 {
		t.Fatalf("Warm called %d times before the request, want 1", warmedAtRequest.Load())
	}
}

// gateStore holds back the batch that stores a tool.started until the
// tool has started running, or 5 s at most.
type gateStore struct {
	store.Store
	running chan struct{}
	waited  atomic.Bool // the batch saw the tool running
}

func (g *gateStore) AppendBatch(ctx context.Context, sessionID string, b store.Batch) error {
	for _, e := range b.Events {
		if e.Type == protocol.EventToolStarted {
			select {
			case <-g.running:
				g.waited.Store(true)
			case <-time.After(5 * time.Second):
			}
		}
	}
	return g.Store.AppendBatch(ctx, sessionID, b)
}

// peekTool is read-only and concurrency-safe; it says when it runs.
type peekTool struct {
	probeTool
	running chan struct{}
	once    sync.Once
}

func (p *peekTool) Info() tools.Info {
	info := p.probeTool.Info()
	info.Name, info.Risk, info.ConcurrencySafe = "peek", tools.RiskRead, true
	return info
}
func (p *peekTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	p.once.Do(func() { close(p.running) })
	return tools.Result{Content: "peeked"}, nil
}

// TestReadOnlyToolRunsWhileAnswerIsStored: a read-only call runs while the
// answer and its tool.started are being stored, and still every event
// reaches the store and the sink in order.
func TestReadOnlyToolRunsWhileAnswerIsStored(t *testing.T) {
	t.Parallel()
	for _, calls := range []int{1, 2} {
		running := make(chan struct{})
		gate := &gateStore{running: running}
		peek := &peekTool{running: running}
		f := newWrappedFixture(t, Options{}, func(st store.Store) store.Store {
			gate.Store = st
			return gate
		}, peek)
		s := f.session()
		if calls == 1 {
			f.srv.Enqueue(llmtest.Call("peek", `{}`), llmtest.Text("done"))
		} else {
			f.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "peek", Arguments: `{"a":1}`},
				{Name: "peek", Arguments: `{"a":2}`}}}, llmtest.Text("done"))
		}
		var mu sync.Mutex
		var live []string
		sink := func(e protocol.Event) {
			if !e.Type.Stored() {
				return
			}
			mu.Lock()
			live = append(live, string(e.Type))
			mu.Unlock()
		}
		if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "look"}, sink); err != nil {
			t.Fatal(err)
		}
		if !gate.waited.Load() {
			t.Errorf("%d calls: the tool did not run while its tool.started was being stored", calls)
		}
		evs, err := f.st.Events(context.Background(), s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for _, e := range evs {
			if e.Type != protocol.EventSessionCreated {
				stored = append(stored, string(e.Type))
			}
		}
		mu.Lock()
		got := strings.Join(live, " ")
		mu.Unlock()
		if want := strings.Join(stored, " "); got != want {
			t.Errorf("%d calls: live events\n%s\nstored events\n%s", calls, got, want)
		}
		order := []string{"message.completed", "usage", "tool.started", "tool.completed"}
		if !inOrder(got, order) {
			t.Errorf("%d calls: events %s; want %v in that order", calls, got, order)
		}
	}
}

// inOrder reports whether the words of want appear in s in that order.
func inOrder(s string, want []string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}
