package main_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestReadOnlyCommandsRunInParallelInTheSandbox: three read-only commands
// of one step (each sleeping a second) run at once, not one after the
// other, and each still runs in the sandbox: under bubblewrap, in a PID
// namespace of its own, where its shell has a PID below 10.
func TestReadOnlyCommandsRunInParallelInTheSandbox(t *testing.T) {
	t.Parallel()
	var calls []llmtest.ToolCall
	for _, id := range []string{"a", "b", "c"} {
		calls = append(calls, llmtest.ToolCall{ID: id, Name: "run_command",
			Arguments: fmt.Sprintf(`{"command":"echo %s; date +%%s.%%N; sleep 1; date +%%s.%%N; echo pid $$"}`, id)})
	}
	e := newEnv(t, llmtest.Reply{ToolCalls: calls}, llmtest.Text("done"))
	needSandbox(t, e)
	bwrap := strings.Contains(e.run("", "sandbox", "status", "--json").stdout, `"backend": "bwrap"`)
	r := e.run("", "run", "look around")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	latestStart, earliestEnd := 0.0, 1e18
	for id, res := range toolResults(e.srv.ChatRequests()[1]) {
		var times []float64
		pid := -1
		for _, l := range strings.Split(res, "\n") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(l), 64); err == nil && v > 1e9 {
				times = append(times, v)
			}
			if rest, ok := strings.CutPrefix(l, "pid "); ok {
				pid, _ = strconv.Atoi(strings.TrimSpace(rest))
			}
		}
		if len(times) != 2 {
			t.Fatalf("result of %s: %q", id, res)
		}
		latestStart, earliestEnd = max(latestStart, times[0]), min(earliestEnd, times[1])
		if bwrap && (pid < 1 || pid >= 10) {
			t.Errorf("command %s ran as PID %d: not in the sandbox's PID namespace\n%s", id, pid, res)
		}
	}
	if latestStart >= earliestEnd {
		t.Errorf("the commands ran one after the other (the last started at %.2f, the first ended at %.2f)", latestStart, earliestEnd)
	}
}
