package compact

import (
	"slices"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

func TestPlanCutPoints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		transcript string
		opts       Options
		want       bool
		from, at   int
	}{
		{name: "below the threshold", transcript: "S U A:a T:a A",
			opts: Options{Window: 1000}},
		// The cut-point cases set Target to the whole window, so that only
		// KeepRecentTokens bounds what is kept.
		{name: "prefers the start of the latest turn", transcript: "S U A:a T:a A U A:b T:b A",
			opts: Options{Window: 100, Target: 1, KeepRecentTokens: 55}, want: true, from: 1, at: 5},
		{name: "a turn too long to keep whole is cut before an assistant message", transcript: "S U A:a T:a A:b T:b A:c T:c A",
			opts: Options{Window: 50, Target: 1, KeepRecentTokens: 35}, want: true, from: 1, at: 6},
		{name: "parallel calls stay with their results", transcript: "S U A:a,b,c T:a T:b T:c A",
			opts: Options{Window: 80, Target: 1, KeepRecentTokens: 55}, want: true, from: 1, at: 2},
		{name: "results in another order stay with their calls", transcript: "S U A A:a,b T:b T:a A",
			opts: Options{Window: 60, Target: 1, KeepRecentTokens: 45}, want: true, from: 1, at: 3},
		{name: "an interrupted call (missing result) may be summarised", transcript: "S U A:a,b T:a U A",
			opts: Options{Window: 60, Target: 1, KeepRecentTokens: 25}, want: true, from: 1, at: 4},
		{name: "an interrupted call at the end is kept with its one result", transcript: "S U A U A A:a,b T:a",
			opts: Options{Window: 60, Target: 1, KeepRecentTokens: 25}, want: true, from: 1, at: 5},
		{name: "a late result for an early call forbids cuts between them", transcript: "S U A:a T:a U A T:a U A",
			opts: Options{Window: 100, Target: 1, KeepRecentTokens: 75, SummaryTokens: 5}, want: true, from: 1, at: 2},
		{name: "the same without the late result", transcript: "S U A:a T:a U A A U A",
			opts: Options{Window: 100, Target: 1, KeepRecentTokens: 75}, want: true, from: 1, at: 4},
		{name: "the frozen context is never summarised", transcript: "S S U A U A",
			opts: Options{Window: 50, Target: 1, KeepRecentTokens: 25}, want: true, from: 2, at: 4},
		{name: "nothing to summarise after the previous record", transcript: "S S U A U A",
			opts: Options{Window: 50, Force: true, Previous: &Record{UpToSeq: 6}}},
		{name: "a previous record moves the start", transcript: "S U A U A U A",
			opts: Options{Window: 70, Target: 1, KeepRecentTokens: 25, Previous: &Record{UpToSeq: 3}, PinnedTokens: 10}, want: true, from: 3, at: 5},
		{name: "a previous record's summary counts", transcript: "S U A U A U A",
			opts: Options{Window: 70, KeepRecentTokens: 15, Previous: &Record{UpToSeq: 3}, PinnedTokens: 1}},
		{name: "forced below the threshold, keeping nothing", transcript: "S U A U A",
			opts: Options{Window: 1000, Force: true, KeepRecentTokens: -1}, want: true, from: 1, at: 5},
		{name: "a huge tool result counts at its capped size", transcript: "S U A:a T:a*1000 A",
			opts: Options{Window: 1000}},
		{name: "a huge tool result counts whole when results are not capped", transcript: "S U A:a T:a*1000 A",
			opts: Options{Window: 1000, ToolResultShare: -1, KeepRecentTokens: 15}, want: true, from: 1, at: 4},
		{name: "overhead counts against the threshold", transcript: "S U A U A",
			opts: Options{Window: 100, Target: 1, Overhead: 40, KeepRecentTokens: 25}, want: true, from: 1, at: 3},
		// The target: what is kept must fit half the window (by default)
		// beside the frozen context, the summary to come and the overhead.
		{name: "the target bounds what is kept", transcript: "S U A:a T:a A:b T:b A:c T:c A",
			opts: Options{Window: 100}, want: true, from: 1, at: 8},
		{name: "the target leaves no room: everything is summarised", transcript: "S*30 U A:a T:a*20 A:b T:b*20",
			opts: Options{Window: 100}, want: true, from: 1, at: 6},
		{name: "overhead takes the room of the kept messages", transcript: "S U A:a T:a A:b T:b A:c T:c A",
			opts: Options{Window: 100, Overhead: 35}, want: true, from: 1, at: 9},
		{name: "the summary to come takes room too", transcript: "S U A:a T:a A:b T:b A:c T:c A",
			opts: Options{Window: 100, SummaryTokens: 35}, want: true, from: 1, at: 9},
		{name: "summarising less than the summary takes is not worth a request", transcript: "S*90 U*5",
			opts: Options{Window: 100}},
		{name: "unless forced", transcript: "S*90 U*5",
			opts: Options{Window: 100, Force: true}, want: true, from: 1, at: 2},
		{name: "no window, no compaction", transcript: "S U A U A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msgs, w := parse(t, tt.transcript)
			cut, ok := Plan(msgs, weighted(w), tt.opts)
			if ok != tt.want {
				t.Fatalf("Plan = %+v, %v; want ok %v", cut, ok, tt.want)
			}
			if !ok {
				return
			}
			if cut.From != tt.from || cut.At != tt.at {
				t.Errorf("cut [%d:%d], want [%d:%d]", cut.From, cut.At, tt.from, tt.at)
			}
			checkCut(t, msgs, cut)
			// PlanCounts agrees.
			counts := Counts(msgs, weighted(w))
			if c2, ok2 := PlanCounts(msgs, counts, tt.opts); !ok2 || c2.At != cut.At || c2.From != cut.From {
				t.Errorf("PlanCounts = [%d:%d] %v, Plan = [%d:%d]", c2.From, c2.At, ok2, cut.From, cut.At)
			}
		})
	}
}

// checkCut asserts what every cut must satisfy: it summarises something
// after the frozen context, it is a cut point, and the view after it is
// exactly the tail of the repaired transcript (no pair split, no message
// lost to the cut).
func checkCut(t *testing.T, msgs []protocol.Message, cut Cut) {
	t.Helper()
	if cut.From < frozenLen(msgs) || cut.At <= cut.From || cut.At > len(msgs) {
		t.Fatalf("cut [%d:%d] out of range (frozen %d, %d messages)", cut.From, cut.At, frozenLen(msgs), len(msgs))
	}
	if cut.At < len(msgs) && msgs[cut.At].Role == protocol.RoleTool {
		t.Errorf("cut before a tool result (index %d)", cut.At)
	}
	if cut.UpToSeq != msgs[cut.At-1].Seq || len(cut.Messages) != cut.At-cut.From {
		t.Errorf("cut %+v inconsistent", cut)
	}
	whole := referenceRepair(msgs)
	split := append(referenceRepair(msgs[:cut.At]), referenceRepair(msgs[cut.At:])...)
	if err := sameRequest(split, whole); err != nil {
		t.Errorf("repair does not distribute over the cut at %d: %v", cut.At, err)
	}
	view := Project(msgs, []Record{{UpToSeq: cut.UpToSeq, Summary: "s"}}, "")
	if err := CheckPairing(view); err != nil {
		t.Errorf("view after the cut: %v", err)
	}
	tail := referenceRepair(msgs[cut.At:])
	if err := sameRequest(view[len(view)-len(tail):], tail); err != nil {
		t.Errorf("view does not end with the kept messages: %v", err)
	}
}

func TestPlanCountsLengthMismatch(t *testing.T) {
	t.Parallel()
	msgs, _ := parse(t, "S U A U A")
	if _, ok := PlanCounts(msgs, []int{1, 2}, Options{Window: 10, Force: true}); ok {
		t.Error("PlanCounts with too few counts compacted")
	}
}

func TestPlanReportsSizes(t *testing.T) {
	t.Parallel()
	msgs, w := parse(t, "S*7 U A:a T:a A U A:b T:b A")
	cut, ok := Plan(msgs, weighted(w), Options{Window: 100, Target: 1, KeepRecentTokens: 40, Overhead: 3})
	if !ok {
		t.Fatal("no cut")
	}
	if cut.FrozenTokens != 7 || cut.SummarisedTokens != 40 || cut.KeptTokens != 40 || cut.ViewTokens != 7+80+3 {
		t.Errorf("sizes %+v", cut)
	}
}

// TestPlanChained runs three compactions in a row on a growing session:
// each starts where the previous ended, and the view after each is paired.
func TestPlanChained(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	var records []Record
	est := Approx
	for step := 0; step < 60; step++ {
		if step%10 == 0 {
			s.user("next part of the task")
		}
		s.call("read_file", `{"path":"a.go"}`, string(slices.Repeat([]byte("x"), 600)), false)
		view := Project(s.msgs, records, "")
		if err := CheckPairing(view); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		opts := Options{Window: 4000}
		if prev := latest(records); prev != nil {
			opts.Previous = prev
			sm := SummaryMessage(prev, prev.Ledger)
			opts.PinnedTokens = est(&sm)
		}
		cut, ok := Plan(s.msgs, est, opts)
		if !ok {
			continue
		}
		checkCut(t, s.msgs, cut)
		if prev := latest(records); prev != nil && cut.Messages[0].Seq != prev.UpToSeq+1 {
			t.Fatalf("cut starts at seq %d, previous record ends at %d", cut.Messages[0].Seq, prev.UpToSeq)
		}
		records = append(records, Record{UpToSeq: cut.UpToSeq, Summary: "summary"})
		after := Project(s.msgs, records, "")
		total := 0
		for i := range after {
			total += est(&after[i])
		}
		if total > 4000*DefaultTarget {
			t.Fatalf("step %d: view after compaction is %d tokens, more than the target", step, total)
		}
	}
	// Each compaction leaves room for several steps: no thrash.
	if len(records) < 3 || len(records) > 60/3 {
		t.Fatalf("%d compactions in 60 steps, want 3 to 20", len(records))
	}
}
