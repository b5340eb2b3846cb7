package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/store/postgres/pgtest"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// pgDurable is a cluster with PostgreSQL's durable defaults (fsync and
// synchronous commit on), for the benchmarks; stopped by TestMain.
var pgDurable = pgtest.Lazy{Options: pgtest.Options{Durable: true}}

// instant is a model that answers at once: a call of the noop tool, then,
// once it sees the tool's result, a short text. Safe for concurrent use.
type instant struct{}

func (instant) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		if onDelta != nil {
			onDelta(llm.Delta{Kind: llm.DeltaText, Text: "done"})
		}
		return &llm.Response{Text: "done", FinishReason: "stop", HasUsage: true, Usage: llm.Usage{InputTokens: 40, OutputTokens: 1}}, nil
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", len(req.Messages)), Name: "noop", Arguments: `{"n":1}`}},
		FinishReason: "tool_calls", HasUsage: true, Usage: llm.Usage{InputTokens: 30, OutputTokens: 5}}, nil
}

// noop is a trivial read-only tool.
type noop struct{}

var noopInfo = tools.Info{Name: "noop", Description: "Does nothing.",
	Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
	Risk:   tools.RiskRead, ConcurrencySafe: true}

func (noop) Info() tools.Info               { return noopInfo }
func (noop) Summary(json.RawMessage) string { return "noop" }
func (noop) Run(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: "ok"}, nil
}

// BenchmarkSteps measures the agent's steps through the real core with an
// instant model and a trivial tool, so what is measured is the harness
// and its store: each turn is two steps (a tool call and its result; the
// answer), and 1, 10 or 100 sessions run turns at once, each on its own
// session, all through one Core (one process, one worker). One op is one
// turn. It reports steps per second and the 99th percentile of a step's
// latency (a step: from the turn's start, or the previous step's end, to
// its last record stored).
//
// The stores: SQLite (WAL, synchronous=NORMAL, one file), PostgreSQL with
// its durable defaults (a commit waits for its WAL flush), and PostgreSQL
// with synchronous_commit=off — SQLite's NORMAL durability (a crash of the
// machine may lose the last commits, never consistency). Both clusters
// are throwaway ones on this machine, over a Unix socket.
func BenchmarkSteps(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres", "postgres-async"} {
		for _, n := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/sessions=%d", kind, n), func(b *testing.B) {
				benchSteps(b, openBenchStore(b, kind), n)
			})
		}
	}
}

func openBenchStore(b *testing.B, kind string) store.Store {
	b.Helper()
	ctx := context.Background()
	var st store.Store
	var err error
	switch kind {
	case "sqlite":
		st, err = store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	case "postgres":
		st, err = postgresOpen(pgDurable.NewDB(b))
	case "postgres-async":
		st, err = postgresOpen(pgDurable.NewDB(b) + "&synchronous_commit=off")
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func benchSteps(b *testing.B, st store.Store, sessions int) {
	reg, err := tools.NewRegistry(noop{})
	if err != nil {
		b.Fatal(err)
	}
	core, err := agent.New(agent.Options{Store: st, Tools: reg, MaxIterations: 4,
		Models: func(string) (agent.Model, error) {
			return agent.Model{ID: "fake/instant", Name: "instant", Client: instant{}}, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ws := b.TempDir()
	ids := make([]string, sessions)
	for i := range ids {
		s, err := core.CreateSession(ctx, ws, "fake/instant", nil)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = s.ID
	}
	var mu sync.Mutex
	var lat []time.Duration
	var next int
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			var mine []time.Duration
			for {
				mu.Lock()
				if next >= b.N {
					lat = append(lat, mine...)
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				last := time.Now()
				sink := func(e protocol.Event) {
					if e.Type == protocol.EventToolCompleted || e.Type == protocol.EventTurnCompleted {
						now := time.Now()
						mine = append(mine, now.Sub(last))
						last = now
					}
				}
				if err := core.Run(ctx, agent.TurnRequest{SessionID: id, Input: "go"}, sink); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "steps/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
