// End-to-end tests of usage, cost and the budgets that stop a turn.

package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestUsageCarriesContextAndCost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Reply{Text: "priced", Usage: &llmtest.Usage{PromptTokens: 1000000, CompletionTokens: 100000, CachedTokens: 200000}})
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	r := e.run("", "run", "--json", "how much")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var usage, done *protocol.Event
	for _, ev := range r.events(t) {
		switch ev.Type {
		case protocol.EventUsage:
			usage = &ev
		case protocol.EventTurnCompleted:
			done = &ev
		}
	}
	// gpt-4o: $2.50 per M input, $1.25 per M cached input, $10 per M output.
	want := 0.8*2.50 + 0.2*1.25 + 0.1*10
	if usage == nil || usage.CostUSD == nil || *usage.CostUSD < want-1e-9 || *usage.CostUSD > want+1e-9 {
		t.Fatalf("usage event %+v, want cost %.4f", usage, want)
	}
	if usage.ContextPercent <= 0 || done == nil || done.CostUSD == nil || *done.CostUSD != *usage.CostUSD {
		t.Errorf("context %% %v, turn.completed %+v", usage.ContextPercent, done)
	}
}

func TestBudgetStopsBetweenStepsAndContinues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	n := 0
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		n++
		if n > 10 {
			return llmtest.Text("finished")
		}
		// Each step costs $0.025 at gpt-4o prices.
		r := llmtest.Call("list_dir", fmt.Sprintf(`{"depth":%d}`, n%5+1))
		r.ToolCalls[0].Arguments = fmt.Sprintf(`{"path":".","depth":%d}`, n%5+1)
		r.Usage = &llmtest.Usage{PromptTokens: 10000, CompletionTokens: 10}
		if n%5 == 0 {
			r.ToolCalls[0].Arguments = fmt.Sprintf(`{"path":"./","depth":%d}`, n%5+1)
		}
		return r
	})
	r := e.run("", "run", "--json", "--max-budget-usd", "0.06", "spend")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "Budget spent: cost") {
		t.Errorf("stderr %q does not name the budget", r.stderr)
	}
	warned := false
	for _, ev := range r.events(t) {
		warned = warned || ev.Type == protocol.EventWarning && strings.Contains(ev.Text, "80%")
	}
	if !warned {
		t.Error("no 80% warning event")
	}
	if got := len(e.srv.ChatRequests()); got != 3 {
		t.Errorf("%d requests, want 3 (stopped before the 4th)", got)
	}
	if c := e.run("", "run", "--continue", "go on"); c.code != 0 {
		t.Errorf("--continue after the budget stop: exit %d: %s", c.code, c.stderr)
	}
}

func TestLoopDetected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		return llmtest.Call("list_dir", `{"path":"."}`)
	})
	r := e.run("", "run", "--max-iterations", "20", "loop")
	if r.code != 3 || !strings.Contains(r.stderr, "Loop detected") {
		t.Fatalf("exit %d, stderr %q; want 3 and a loop message", r.code, r.stderr)
	}
	if got := len(e.srv.ChatRequests()); got != 5 {
		t.Errorf("%d requests, want 5", got)
	}
}

func TestSessionBudgetFromConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"gw","budget":{"maxSessionCostUsd":0.03},
		"providers":{"gw":{"kind":"custom","baseURL":%q,"model":"gpt-4o","models":["gpt-4o"],"requiresApiKey":false}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	e.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		// $0.025 per answer at gpt-4o prices.
		return llmtest.Reply{Text: "ok", Usage: &llmtest.Usage{PromptTokens: 10000, CompletionTokens: 1}}
	})
	if r := e.run("", "run", "one"); r.code != 0 {
		t.Fatalf("first turn: exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "two"); r.code != 0 {
		t.Fatalf("second turn: exit %d: %s", r.code, r.stderr)
	}
	r := e.run("", "run", "--continue", "three")
	if r.code != 3 || !strings.Contains(r.stderr, "session cost") {
		t.Fatalf("third turn: exit %d, %q; want 3 naming the session budget", r.code, r.stderr)
	}
	list := e.run("", "sessions", "list", "--json")
	if !strings.Contains(list.stdout, `"costUsd": 0.05`) {
		t.Errorf("session cost not stored: %s", list.stdout)
	}
}
