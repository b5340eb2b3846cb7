package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func requestTokens(req []protocol.Message, est Estimator) int {
	n := 0
	for i := range req {
		n += est(&req[i])
	}
	return n
}

func TestSummaryRequest(t *testing.T) {
	t.Parallel()
	s, _, _ := earlyWork()
	prev := &Record{UpToSeq: 1, Summary: "Earlier: the user wants the store fixed."}
	req := SummaryRequest(prev, s.msgs[1:], "focus on the race", 0, Approx)
	if len(req) != 2 || req[0].Role != protocol.RoleSystem || req[1].Role != protocol.RoleUser {
		t.Fatalf("request roles %+v", req)
	}
	for _, want := range []string{"handover note", "## Goal", "## Decisions", "## Files and code", "## Open problems", "## Plan and next step", "previous summary"} {
		if !strings.Contains(req[0].Content, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	user := req[1].Content
	for _, want := range []string{
		"## Previous summary", "before seq 2", "Earlier: the user wants the store fixed.",
		"(seq 2–28)", "[seq 2] user:\nFix the flaky test", constraint,
		`→ calls edit_file (call_2) with {"path":"internal/store/store.go"`,
		"[seq 16] tool result for call_7 (run_command), an error:\nTool failed: permission denied",
		"## The user's instructions for this summary\n\nfocus on the race",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q", want)
		}
	}
	for _, m := range req {
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			t.Errorf("summary request carries tool calls: %+v", m)
		}
	}
	// Without a previous record or instructions, those parts are absent.
	req = SummaryRequest(nil, s.msgs[1:], "", 0, Approx)
	if strings.Contains(req[1].Content, "Previous summary") || strings.Contains(req[1].Content, "instructions for this summary") {
		t.Errorf("empty parts shown:\n%s", req[1].Content)
	}
}

func TestSummaryRequestFits(t *testing.T) {
	t.Parallel()
	var s session
	s.user("Start: " + constraint)
	for i := range 40 {
		out := fmt.Sprintf("HEAD-%d\n", i) + strings.Repeat("output line\n", 2000) + fmt.Sprintf("TAIL-%d\n", i)
		s.call("run_command", `{"command":"go test ./..."}`, out+"[exit code 1, 3.0s]", true)
		s.say(fmt.Sprintf("Thought %d: the failure is in the parser.", i))
	}
	for _, max := range []int{200000, 60000, 20000} {
		req := SummaryRequest(&Record{Summary: strings.Repeat("old summary ", 100)}, s.msgs, "", max, Approx)
		if n := requestTokens(req, Approx); n > max {
			t.Errorf("max %d: request is %d tokens", max, n)
		}
		user := req[1].Content
		for _, want := range []string{"Start: " + constraint, "HEAD-0", "TAIL-0", "TAIL-39", "[exit code 1, 3.0s]", "Thought 39", "old summary"} {
			if !strings.Contains(user, want) {
				t.Errorf("max %d: request lacks %q", max, want)
			}
		}
		if max < 200000 && !strings.Contains(user, "tokens omitted …]") {
			t.Errorf("max %d: no tool result was cut", max)
		}
	}
	// Far too small for every message: the middle is left out, the ends
	// stay.
	req := SummaryRequest(nil, s.msgs, "", 3000, Approx)
	if n := requestTokens(req, Approx); n > 3000 {
		t.Errorf("request is %d tokens", n)
	}
	if user := req[1].Content; !strings.Contains(user, "left out to fit this request") || !strings.Contains(user, "Start: ") || !strings.Contains(user, "Thought 39") {
		t.Errorf("request:\n%s", user)
	}
}

func TestSummaryRequestPrefersCuttingToolResults(t *testing.T) {
	t.Parallel()
	var s session
	s.user("goal")
	long := strings.Repeat("the user explained a lot ", 200)
	s.say(long)
	s.call("read_file", `{"path":"big.txt"}`, strings.Repeat("z", 30000), false)
	req := SummaryRequest(nil, s.msgs, "", 6000, Approx)
	if !strings.Contains(req[1].Content, long) {
		t.Error("the assistant's text was cut although cutting the tool result was enough")
	}
	if n := requestTokens(req, Approx); n > 6000 {
		t.Errorf("request is %d tokens", n)
	}
}
