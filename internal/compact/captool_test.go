package compact

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestCapToolResults(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	s.user("go")
	big := "FIRST LINE\n" + strings.Repeat("line of output\n", 3000) + "LAST LINE\n[exit code 0, 1.0s]"
	s.call("run_command", `{"command":"cat big"}`, big, false)
	s.call("read_file", `{"path":"small"}`, "small", false)
	orig := append([]protocol.Message(nil), s.msgs...)
	const window = 8000
	view := CapToolResults(s.msgs, window, 0.25, Approx)
	if !reflect.DeepEqual(s.msgs, orig) {
		t.Fatal("CapToolResults changed its argument")
	}
	if err := CheckPairing(view); err != nil {
		t.Fatal(err)
	}
	got := view[3]
	if got.Seq != 4 || got.ToolCallID != "call_1" {
		t.Fatalf("capped message %+v", got)
	}
	if n := Approx(&got); n > window/4 {
		t.Errorf("capped result is %d tokens, cap %d", n, window/4)
	}
	for _, want := range []string{"FIRST LINE\n", "LAST LINE\n[exit code 0, 1.0s]", "tokens omitted; the full output is kept: call read_tool_output with seq=4 …]"} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("capped result lacks %q", want)
		}
	}
	if !strings.Contains(got.Content, "of output\n[… ") || !strings.Contains(got.Content, "…]\nline of output\n") {
		t.Errorf("not cut at line ends:\n%.200s", got.Content)
	}
	if view[5].Content != "small" {
		t.Error("a small result was changed")
	}
	// Nothing to cut: the same slice comes back.
	if v := CapToolResults(view, window, 0, Approx); &v[0] != &view[0] {
		t.Error("CapToolResults copied a view it did not change")
	}
}

func TestCapToolResultsRunes(t *testing.T) {
	t.Parallel()
	msgs := []protocol.Message{
		{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "a"}}},
		{Role: protocol.RoleTool, ToolCallID: "a", Content: strings.Repeat("日本語", 5000)},
	}
	view := CapToolResults(msgs, 4000, 0.25, Approx)
	c := view[1].Content
	if !strings.Contains(c, "tokens omitted …]") || strings.Contains(c, "seq=") {
		t.Errorf("marker of an unstored result: %.300s", c)
	}
	if !strings.HasPrefix(c, "日本語") || !strings.HasSuffix(c, "日本語") || !isValidUTF8(c) {
		t.Error("cut inside a rune")
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestDropOldest(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	for turn := range 5 {
		s.user(fmt.Sprintf("turn %d", turn))
		for range 4 {
			s.call("read_file", `{"path":"a"}`, strings.Repeat("r", 600), false)
		}
		s.say("done")
	}
	view := Project(s.msgs, []Record{{UpToSeq: 0, Summary: "sum"}}, "")
	total := requestTokens(view, Approx)
	limit := total / 2
	out, n := DropOldest(view, limit, Approx, "## Ledger\n\n"+constraint)
	if n == 0 {
		t.Fatal("nothing dropped")
	}
	if err := CheckPairing(out); err != nil {
		t.Fatal(err)
	}
	if got := requestTokens(out, Approx); got > limit {
		t.Errorf("view is %d tokens after dropping, limit %d", got, limit)
	}
	if out[0].Role != protocol.RoleSystem || !isSummary(&out[1]) {
		t.Error("the frozen context or the summary was dropped")
	}
	marker := out[2]
	if !strings.HasPrefix(marker.Content, DroppedHeader) || !strings.Contains(marker.Content, constraint) ||
		!strings.Contains(marker.Content, fmt.Sprintf("%d messages (seq 2–%d)", n, out[3].Seq-1)) {
		t.Errorf("marker %q", marker.Content)
	}
	if out[3].Role != protocol.RoleUser {
		t.Errorf("dropped part of a turn although whole turns fit: view goes on with %+v", out[3])
	}
	// A view that fits is returned as is.
	if same, n := DropOldest(view, total, Approx, ""); n != 0 || len(same) != len(view) {
		t.Error("DropOldest dropped from a view that fits")
	}
}

func TestDropOldestWithinATurn(t *testing.T) {
	t.Parallel()
	// One long turn: no user boundary to cut at, so it cuts before an
	// assistant message, never between a call and its results.
	var s session
	s.system("sys")
	s.user("one long task")
	for range 20 {
		s.add(protocol.Message{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "x", Name: "grep"}, {ID: "y", Name: "grep"}}})
		s.add(protocol.Message{Role: protocol.RoleTool, ToolCallID: "x", Content: strings.Repeat("g", 300)})
		s.add(protocol.Message{Role: protocol.RoleTool, ToolCallID: "y", Content: strings.Repeat("h", 300)})
	}
	view := Project(s.msgs, nil, "")
	limit := requestTokens(view, Approx) / 3
	out, n := DropOldest(view, limit, Approx, "")
	if n == 0 || requestTokens(out, Approx) > limit {
		t.Fatalf("dropped %d, view %d tokens, limit %d", n, requestTokens(out, Approx), limit)
	}
	if err := CheckPairing(out); err != nil {
		t.Fatal(err)
	}
	if out[2].Role != protocol.RoleAssistant {
		t.Errorf("view goes on with %+v", out[2])
	}
	// Even the last exchange is too big: only it is kept.
	out, _ = DropOldest(view, 10, Approx, "")
	if err := CheckPairing(out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2+3 {
		t.Errorf("view of %d messages, want system, marker and the last exchange", len(out))
	}
}
