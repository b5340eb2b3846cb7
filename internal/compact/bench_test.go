package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// benchSession returns a realistic 5,000-message transcript: a system
// message, a user message every 50 messages, and otherwise an assistant
// tool call (every other message) followed by its result of about 1 KB.
func benchSession(n int) []protocol.Message {
	var s session
	s.system(strings.Repeat("You are mx-claw, a coding agent. ", 60))
	result := strings.Repeat("func example() { return 42 } // some output\n", 23) // ~1 KB
	for i := 0; len(s.msgs) < n; i++ {
		if i%25 == 0 {
			s.user(fmt.Sprintf("Please continue with step %d of the refactoring, and run the tests.", i/25))
			continue
		}
		switch i % 3 {
		case 0:
			s.call("run_command", fmt.Sprintf(`{"command":"go test ./internal/pkg%d/..."}`, i), result+"[exit code 0, 1.3s]", false)
		case 1:
			s.call("edit_file", fmt.Sprintf(`{"path":"internal/pkg%d/file.go","old_string":"return 41","new_string":"return 42"}`, i), "Edited the file.", false)
		default:
			s.call("read_file", fmt.Sprintf(`{"path":"internal/pkg%d/file.go"}`, i), result, false)
		}
	}
	return s.msgs[:n]
}

// cachedEstimator serves stored messages' counts from a slice indexed by
// Seq, the way the integrator's cache would.
func cachedEstimator(msgs []protocol.Message) Estimator {
	counts := Counts(msgs, Approx)
	return func(m *protocol.Message) int {
		if m.Seq > 0 && int(m.Seq) <= len(counts) {
			return counts[m.Seq-1]
		}
		return Approx(m)
	}
}

func benchRecords(msgs []protocol.Message) ([]Record, string) {
	ledger := Ledger(msgs[:len(msgs)/2], nil, LedgerOptions{})
	return []Record{
		{ID: "1", UpToSeq: int64(len(msgs) / 4), Summary: strings.Repeat("An earlier summary. ", 100)},
		{ID: "2", UpToSeq: int64(len(msgs) / 2), Summary: strings.Repeat("The latest summary. ", 200), Ledger: ledger},
	}, ledger
}

func BenchmarkProject5000(b *testing.B) {
	msgs := benchSession(5000)
	records, ledger := benchRecords(msgs)
	b.ReportAllocs()
	for b.Loop() {
		_ = Project(msgs, records, ledger)
	}
}

func BenchmarkProject5000NoRecord(b *testing.B) {
	msgs := benchSession(5000)
	b.ReportAllocs()
	for b.Loop() {
		_ = Project(msgs, nil, "")
	}
}

func BenchmarkPlan5000(b *testing.B) {
	msgs := benchSession(5000)
	counts := Counts(msgs, Approx)
	records, _ := benchRecords(msgs)
	opts := Options{Window: 2_000_000, Previous: &records[1], PinnedTokens: 3000}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := PlanCounts(msgs, counts, opts); ok {
			b.Fatal("compacted")
		}
	}
}

func BenchmarkPlan5000Estimator(b *testing.B) {
	msgs := benchSession(5000)
	est := cachedEstimator(msgs)
	records, _ := benchRecords(msgs)
	opts := Options{Window: 200_000, Previous: &records[1], PinnedTokens: 3000}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Plan(msgs, est, opts); !ok {
			b.Fatal("no compaction")
		}
	}
}

// BenchmarkView5000 is the whole per-request work: decide (no compaction
// due), project, cap large tool results.
func BenchmarkView5000(b *testing.B) {
	msgs := benchSession(5000)
	counts := Counts(msgs, Approx)
	est := cachedEstimator(msgs)
	records, ledger := benchRecords(msgs)
	opts := Options{Window: 2_000_000, Previous: &records[1], PinnedTokens: 3000}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := PlanCounts(msgs, counts, opts); ok {
			b.Fatal("compacted")
		}
		view := Project(msgs, records, ledger)
		_ = CapToolResults(view, opts.Window, 0, est)
	}
}

// BenchmarkLedger5000 is the work of one compaction, not of a request.
func BenchmarkLedger5000(b *testing.B) {
	msgs := benchSession(5000)
	b.ReportAllocs()
	for b.Loop() {
		_ = Ledger(msgs, nil, LedgerOptions{Root: "/ws"})
	}
}

func BenchmarkSummaryRequest2500(b *testing.B) {
	msgs := benchSession(5000)
	est := cachedEstimator(msgs)
	b.ReportAllocs()
	for b.Loop() {
		_ = SummaryRequest(nil, msgs[1:2500], "", 100_000, est)
	}
}
