package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools/builtin"
)

// timedCommand prints the time it starts and the time it ends, a second
// later: two calls ran at once when their spans overlap. date and sleep
// are read-only to the classifier; touch is not.
func timedCommand(id, extra string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: "run_command",
		Arguments: fmt.Sprintf(`{"command":"echo %s; date +%%s.%%N; sleep 1; %sdate +%%s.%%N"}`, id, extra)}
}

// spans returns the [start, end] of each timed command's result, by call
// id (the call "r" is a read, not timed).
func spans(t *testing.T, req llmtest.Request) map[string][2]float64 {
	t.Helper()
	out := map[string][2]float64{}
	for _, m := range req.Chat.Messages {
		if m.Role != "tool" || m.ToolCallID == "r" {
			continue
		}
		var times []float64
		for _, f := range strings.Fields(m.Content) {
			if v, err := strconv.ParseFloat(f, 64); err == nil && v > 1e9 {
				times = append(times, v)
			}
		}
		if len(times) != 2 {
			t.Fatalf("result of %s: %q, want two times", m.ToolCallID, m.Content)
		}
		out[m.ToolCallID] = [2]float64{times[0], times[1]}
	}
	return out
}

// overlapping reports whether every span overlaps every other.
func overlapping(s map[string][2]float64) bool {
	latestStart, earliestEnd := 0.0, 1e18
	for _, v := range s {
		latestStart, earliestEnd = max(latestStart, v[0]), min(earliestEnd, v[1])
	}
	return latestStart < earliestEnd
}

// Read-only commands run in parallel with each other and with read
// tools, decided per call: a batch with a command that writes runs
// serially, in the model's order.
func TestReadOnlyCommandsRunInParallel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mode     permission.Mode
		calls    []llmtest.ToolCall
		parallel bool
	}{
		{name: "three read-only commands", mode: permission.ModeDefault,
			calls: []llmtest.ToolCall{timedCommand("a", ""), timedCommand("b", ""), timedCommand("c", "")}, parallel: true},
		{name: "a read-only command beside a read", mode: permission.ModeDefault,
			calls: []llmtest.ToolCall{timedCommand("a", ""), timedCommand("b", ""),
				{ID: "r", Name: "list_dir", Arguments: `{}`}}, parallel: true},
		{name: "a command that writes keeps the batch serial", mode: permission.ModeBypass,
			calls: []llmtest.ToolCall{timedCommand("a", ""), timedCommand("b", "touch x; ")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Options{Permissions: func(context.Context, *protocol.Session) (*permission.Policy, error) {
				return permission.NewPolicy(permission.Options{Mode: tt.mode})
			}}, builtin.NewRunCommand())
			f.srv.Enqueue(llmtest.Reply{ToolCalls: tt.calls}, llmtest.Text("done"))
			s := f.session()
			var order []string
			if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, func(e protocol.Event) {
				if e.Type == protocol.EventToolStarted || e.Type == protocol.EventToolOutput || e.Type == protocol.EventToolCompleted {
					order = append(order, string(e.Type)+":"+e.ToolCallID)
				}
			}); err != nil {
				t.Fatal(err)
			}
			sp := spans(t, f.srv.ChatRequests()[1])
			if got := overlapping(sp); got != tt.parallel {
				t.Errorf("spans %v overlap: %v, want %v", sp, got, tt.parallel)
			}
			// A command's output never comes before its tool.started.
			started := map[string]bool{}
			for _, e := range order {
				kind, id, _ := strings.Cut(e, ":")
				switch kind {
				case string(protocol.EventToolStarted):
					started[id] = true
				case string(protocol.EventToolOutput), string(protocol.EventToolCompleted):
					if !started[id] {
						t.Errorf("%s before tool.started: %v", e, order)
					}
				}
			}
		})
	}
}
