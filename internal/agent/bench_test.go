package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/llm/openai"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// noopTool is the trivial tool of the harness benchmarks.
type noopTool struct{}

func (noopTool) Info() tools.Info {
	return tools.Info{Name: "noop", Description: "Does nothing and says so.",
		Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`),
		Risk:   tools.RiskRead, ConcurrencySafe: true}
}
func (noopTool) Summary(args json.RawMessage) string { return "noop" }
func (noopTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	return tools.Result{Content: "done " + string(args)}, nil
}

// instantModel answers with a noop call until steps calls were made, then
// with text. It encodes each request as a provider adapter would, so the
// cost that grows with the request is counted, and records when each
// request arrived.
type instantModel struct {
	steps int
	n     int
	times []time.Time
}

func (m *instantModel) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	m.times = append(m.times, time.Now())
	if err := json.NewEncoder(io.Discard).Encode(req.Messages); err != nil {
		return nil, err
	}
	m.n++
	if m.n > m.steps {
		onDelta(llm.Delta{Kind: llm.DeltaText, Text: "finished"})
		return &llm.Response{Text: "finished", FinishReason: "stop", HasUsage: true, Usage: llm.Usage{InputTokens: 10, OutputTokens: 1}}, nil
	}
	return &llm.Response{
		ToolCalls:    []llm.ToolCall{{ID: fmt.Sprintf("call_%d", m.n), Name: "noop", Arguments: fmt.Sprintf(`{"n":%d}`, m.n)}},
		FinishReason: "tool_calls", HasUsage: true, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5},
	}, nil
}

// stepStats turns request arrival times into the median gap of steps
// 1–10 and 190–200.
func stepStats(times []time.Time) (early, late time.Duration) {
	med := func(from, to int) time.Duration {
		var d []time.Duration
		for i := from; i < to && i+1 < len(times); i++ {
			d = append(d, times[i+1].Sub(times[i]))
		}
		if len(d) == 0 {
			return 0
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	return med(0, 10), med(189, 200)
}

func benchCore(b *testing.B, client llm.Client, steps int) (*Core, store.Store, string) {
	return benchCoreWith(b, client, steps, nil)
}

func benchCoreWith(b *testing.B, client llm.Client, steps int, cat func(string) catalog.Model) (*Core, store.Store, string) {
	b.Helper()
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	reg, err := tools.NewRegistry(noopTool{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(Options{Store: st, Tools: reg, MaxIterations: steps + 1, Catalog: cat,
		Models: func(string) (Model, error) {
			return Model{ID: "fake/fake-model", Name: "fake-model", Client: client}, nil
		}})
	if err != nil {
		b.Fatal(err)
	}
	return c, st, b.TempDir()
}

func runSession(b *testing.B, c *Core, ws string) {
	b.Helper()
	ctx := context.Background()
	s, err := c.CreateSession(ctx, ws, "fake/fake-model", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Run(ctx, TurnRequest{SessionID: s.ID, Input: "run the noop tool 200 times"}, nil); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSession200 measures the harness's own cost per step: a 200-step
// turn against an instant in-process model with a trivial tool, with the
// real SQLite store. One op is one whole session.
func BenchmarkSession200(b *testing.B) {
	const steps = 200
	var early, late []time.Duration
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		b.StopTimer()
		m := &instantModel{steps: steps}
		c, _, ws := benchCore(b, m, steps)
		b.StartTimer()
		runSession(b, c, ws)
		e, l := stepStats(m.times)
		early, late = append(early, e), append(late, l)
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(median(early).Nanoseconds()), "ns/step(1-10)")
	b.ReportMetric(float64(median(late).Nanoseconds()), "ns/step(190-200)")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N)/steps, "allocs/step")
}

// BenchmarkSession200Context is BenchmarkSession200 with context
// management on (a model catalog): the view is projected from the
// transcript before every request.
func BenchmarkSession200Context(b *testing.B) {
	const steps = 200
	var early, late []time.Duration
	cat := func(id string) catalog.Model { return catalog.Lookup(id, nil) }
	for b.Loop() {
		b.StopTimer()
		m := &instantModel{steps: steps}
		c, _, ws := benchCoreWith(b, m, steps, cat)
		b.StartTimer()
		runSession(b, c, ws)
		e, l := stepStats(m.times)
		early, late = append(early, e), append(late, l)
	}
	b.ReportMetric(float64(median(early).Nanoseconds()), "ns/step(1-10)")
	b.ReportMetric(float64(median(late).Nanoseconds()), "ns/step(190-200)")
}

// BenchmarkSession200HTTP is BenchmarkSession200 through the real provider
// adapter and the fake OpenAI-compatible server over loopback.
func BenchmarkSession200HTTP(b *testing.B) {
	const steps = 200
	srv := llmtest.NewTestServer(b)
	srv.RecordBodies(false)
	var early, late []time.Duration
	for b.Loop() {
		b.StopTimer()
		n := 0
		var times []time.Time
		srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
			times = append(times, time.Now())
			n++
			if n > steps {
				return llmtest.Text("finished")
			}
			return llmtest.Call("noop", fmt.Sprintf(`{"n":%d}`, n))
		})
		c, _, ws := benchCore(b, openai.New(openai.Config{BaseURL: srv.URL()}), steps)
		b.StartTimer()
		runSession(b, c, ws)
		e, l := stepStats(times)
		early, late = append(early, e), append(late, l)
	}
	b.ReportMetric(float64(median(early).Nanoseconds()), "ns/step(1-10)")
	b.ReportMetric(float64(median(late).Nanoseconds()), "ns/step(190-200)")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
