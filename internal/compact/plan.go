package compact

import "github.com/mx-claw/mx-claw/internal/protocol"

// Defaults of Options and of CapToolResults.
const (
	// DefaultThreshold is the share of the window above which a view is
	// compacted.
	DefaultThreshold = 0.8
	// DefaultTarget is the share of the window a compaction brings the
	// view down to, at most. The gap between it and the threshold is what
	// the conversation may grow before the next compaction: with a target
	// near the threshold every step would cross it again and pay for a
	// summary (issue 20: 39 compactions in 40 steps).
	DefaultTarget = 0.5
	// DefaultKeepRecentShare is the share of the window kept verbatim after
	// a compaction, at most (less when the target leaves less room).
	DefaultKeepRecentShare = 0.25
	// DefaultSummaryShare is the share of the window set aside for the
	// message that will stand for the summarised part (ledger and
	// summary) while Plan chooses what to keep, before that message is
	// written.
	DefaultSummaryShare = 0.1
	// DefaultToolResultShare is the share of the window above which a
	// single tool result is cut in the view.
	DefaultToolResultShare = 0.25
)

// capMarkerTokens is what the marker CapToolResults puts in a cut result
// costs, about.
const capMarkerTokens = 40

// Options say when and where Plan cuts.
type Options struct {
	// Window is the model's context window in tokens. Without one, Plan
	// never compacts.
	Window int
	// Threshold is the share of Window above which the view is compacted;
	// 0 means DefaultThreshold.
	Threshold float64
	// Target is the share of Window the view is brought down to by a
	// compaction, frozen context, summary message and Overhead included;
	// 0 means DefaultTarget. What is kept verbatim is what fits under it.
	Target float64
	// KeepRecentTokens is how much of the end of the conversation is kept
	// verbatim, at most; 0 means DefaultKeepRecentShare of Window, and a
	// negative value means nothing is kept (a manual compaction of
	// everything). Less is kept when Target leaves less room.
	KeepRecentTokens int
	// SummaryTokens is the room set aside for the summary message of the
	// new record when choosing what to keep; 0 means the larger of
	// PinnedTokens and DefaultSummaryShare of Window.
	SummaryTokens int
	// Overhead is what the request adds to the messages, in tokens (tool
	// schemas, room for the answer). It counts against the threshold.
	Overhead int
	// ToolResultShare is the share of Window above which CapToolResults
	// cuts a tool result, so Plan counts such results at their capped
	// size; 0 means DefaultToolResultShare, a negative value counts every
	// result whole.
	ToolResultShare float64
	// Previous is the latest record, if any: the view starts after it.
	Previous *Record
	// PinnedTokens is the size of the summary message Project makes for
	// Previous (estimate SummaryMessage once per record). 0 means Approx of
	// it.
	PinnedTokens int
	// Force compacts even below the threshold (a manual /compact).
	Force bool
}

// Cut is Plan's answer: summarise Messages (msgs[From:At]) and keep the
// rest verbatim.
type Cut struct {
	// From is the index of the first message to summarise: the first after
	// the frozen context and after Previous.
	From int
	// At is the index of the first message kept verbatim; len(msgs) when
	// everything is summarised.
	At int
	// UpToSeq is the Seq of msgs[At-1], the new Record's UpToSeq.
	UpToSeq int64
	// Messages are msgs[From:At] (not a copy).
	Messages []protocol.Message
	// ViewTokens is the size of the view before the compaction, with
	// Overhead.
	ViewTokens int
	// FrozenTokens, SummarisedTokens and KeptTokens are the sizes of the
	// frozen context, of Messages and of msgs[At:] (large tool results
	// counted capped).
	FrozenTokens, SummarisedTokens, KeptTokens int
}

// Plan decides whether the view of msgs (the stored transcript in Seq
// order, after opts.Previous) exceeds opts.Threshold × opts.Window and, if
// so or if opts.Force, where to cut. The view after the cut must fit
// opts.Target × opts.Window with the frozen context, the new summary
// message (opts.SummaryTokens) and opts.Overhead, so that the next
// compaction comes many steps later; within that room it keeps as many of
// the most recent messages as it can, up to KeepRecentTokens, and none if
// there is no room. It cuts only at a cut point (never between an
// assistant tool call and its results, never in the frozen context), and
// prefers the start of a user turn when that keeps at least half as much,
// so recent turns stay whole. It reports false when no compaction is due
// or there is nothing to summarise.
//
// est is called once for every message, on every call: serve it from a
// cache (see [Estimator]) or use [PlanCounts].
func Plan(msgs []protocol.Message, est Estimator, opts Options) (Cut, bool) {
	return plan(msgs, func(i int) int { return est(&msgs[i]) }, opts)
}

// PlanCounts is Plan with the tokens of msgs[i] given as counts[i] (see
// [Counts]); it calls no estimator. counts must be as long as msgs.
func PlanCounts(msgs []protocol.Message, counts []int, opts Options) (Cut, bool) {
	if len(counts) != len(msgs) {
		return Cut{}, false
	}
	return plan(msgs, func(i int) int { return counts[i] }, opts)
}

func plan(msgs []protocol.Message, count func(int) int, opts Options) (Cut, bool) {
	if opts.Window <= 0 {
		return Cut{}, false
	}
	window := float64(opts.Window)
	share := opts.ToolResultShare
	if share == 0 {
		share = DefaultToolResultShare
	}
	toolCap := 0
	if share > 0 {
		toolCap = int(share * window)
	}
	weight := func(i int) int {
		n := count(i)
		if toolCap > 0 && n > toolCap+capMarkerTokens && msgs[i].Role == protocol.RoleTool {
			n = toolCap + capMarkerTokens
		}
		return n
	}

	frozen := frozenLen(msgs)
	start := keptStart(msgs, frozen, opts.Previous)
	frozenTokens := 0
	for i := range frozen {
		frozenTokens += count(i)
	}
	pinned := 0
	if opts.Previous != nil {
		pinned = opts.PinnedTokens
		if pinned <= 0 {
			m := SummaryMessage(opts.Previous, opts.Previous.Ledger)
			pinned = Approx(&m)
		}
	}
	n := len(msgs)
	viewed := 0
	for i := start; i < n; i++ {
		viewed += weight(i)
	}
	view := frozenTokens + pinned + viewed + opts.Overhead
	if !opts.Force && float64(view) <= orDefault(opts.Threshold, DefaultThreshold)*window {
		return Cut{}, false
	}

	budget, summary := keepBudget(opts, frozenTokens, pinned)
	// One backward pass: s is the size of msgs[c:]. The earliest cut
	// point keeping at most budget is the candidate; the earliest such
	// cut at the start of a user turn is preferred if it keeps at least
	// half as much.
	cp := newCuts(msgs, start)
	anyAt, userAt := -1, -1
	anyKept, userKept := 0, 0
	s := 0
	for c := n; c > start && s <= budget; c-- {
		if cp.ok(c) {
			anyAt, anyKept = c, s
			if c < n && msgs[c].Role == protocol.RoleUser {
				userAt, userKept = c, s
			}
		}
		s += weight(c - 1)
	}
	at, kept := anyAt, anyKept
	if userAt >= 0 && 2*userKept >= anyKept {
		at, kept = userAt, userKept
	}
	if at <= start {
		return Cut{}, false
	}
	if !opts.Force && viewed-kept <= summary {
		// The summary would take as much room as what it replaces (the
		// frozen context alone fills the window): asking for it gains
		// nothing.
		return Cut{}, false
	}
	return Cut{
		From:             start,
		At:               at,
		UpToSeq:          msgs[at-1].Seq,
		Messages:         msgs[start:at],
		ViewTokens:       view,
		FrozenTokens:     frozenTokens,
		SummarisedTokens: viewed - kept,
		KeptTokens:       kept,
	}, true
}

// keepBudget returns how many tokens of the most recent messages a cut may
// keep verbatim — what the target leaves beside the frozen context, the
// new summary message and the overhead, at most KeepRecentTokens, at least
// 0 — and the room set aside for the summary message.
func keepBudget(opts Options, frozenTokens, pinned int) (budget, summary int) {
	window := float64(opts.Window)
	summary = opts.SummaryTokens
	if summary <= 0 {
		summary = max(pinned, int(DefaultSummaryShare*window))
	}
	keep := opts.KeepRecentTokens
	switch {
	case keep == 0:
		keep = int(DefaultKeepRecentShare * window)
	case keep < 0:
		return 0, summary
	}
	room := int(orDefault(opts.Target, DefaultTarget)*window) - frozenTokens - summary - opts.Overhead
	return max(0, min(keep, room)), summary
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def float64) float64 {
	if v <= 0 {
		return def
	}
	return v
}
