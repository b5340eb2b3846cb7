package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

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

func (p *probeTool) Name() string                        { return "probe" }
func (p *probeTool) Description() string                 { return "Looks at the store." }
func (p *probeTool) Schema() json.RawMessage             { return json.RawMessage(`{"type":"object"}`) }
func (p *probeTool) Risk() tools.Risk                    { return tools.RiskWrite }
func (p *probeTool) ConcurrencySafe() bool               { return false }
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
