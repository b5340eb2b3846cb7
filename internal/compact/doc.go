// Package compact owns the pure machinery of context compaction: which part
// of a long session the model stops seeing verbatim, what it sees instead,
// and the pinned ledger that no summary may drop (DESIGN §2 invariants 2–4,
// §9).
//
// The stored transcript is the whole truth and is never rewritten; the view
// a model gets is a projection of it. A compaction is a [Record]: "messages
// up to UpToSeq are replaced by this summary and this ledger". [Project]
// turns the transcript and its records into the view: the frozen context
// (the leading system messages), one user-role message holding the ledger
// and the latest summary, then every later message unchanged. The same
// transcript and records always give the same view, so a resumed session
// sends what the original process would have sent.
//
// The parts, in the order a request uses them:
//
//   - [Plan] (or [PlanCounts]) decides whether the view exceeds the
//     threshold and, if so, where to cut: never inside the frozen context
//     and never between an assistant tool call and its results, and late
//     enough that the view falls to the target (half the window), so the
//     next compaction comes many steps later instead of on the next one.
//   - [SummaryRequest] builds the messages that ask the model for the
//     summary (a handover note), chaining the previous summary and fitting
//     the request into the summariser's window.
//   - [Ledger] derives, without a model, what must survive every
//     compaction: the user's words verbatim, files read and changed with
//     their hashes, the todo list, commands and their exit status, the last
//     error.
//   - [Project] builds the view; [CapToolResults] cuts single huge tool
//     results in it; [DropOldest] is the fallback when summarisation fails.
//   - [CheckPairing] asserts the repair invariant on a view.
//
// Per request, the agent (which owns the store and the model) does:
//
//	cut, due := PlanCounts(msgs, counts, Options{Window: w, Overhead: tools,
//		Previous: latestRecord, PinnedTokens: pinned})
//	if due {
//		// PreCompact hooks; then ask the model:
//		req := SummaryRequest(latestRecord, cut.Messages, "", w-outputReserve, est)
//		// on success store a compaction event and
//		// Record{UpToSeq: cut.UpToSeq, Summary: answer,
//		//	Ledger: Ledger(msgs[:cut.At], events, LedgerOptions{Root: root, Files: files})}
//	}
//	view := CapToolResults(Project(msgs, records, latestRecord.Ledger), w, 0, est)
//	// if summarisation failed or the view is still too big:
//	view, dropped := DropOldest(view, limit, est, Ledger(msgs, events, ledgerOpts))
//
// where counts is a per-message token slice kept alongside the transcript
// (one estimate per stored message, appended as messages are stored) and
// pinned is est(SummaryMessage(latestRecord, latestRecord.Ledger)),
// computed once per record.
//
// The package calls no model, touches no store and keeps no state: token
// counts come in through an [Estimator] (or precomputed counts), so it does
// not depend on the model catalog. The view it builds is already repaired
// the way the agent repairs a transcript (every tool call followed by
// exactly one result, in call order; orphans dropped; missing results
// filled with [InterruptedResult]), so the agent's own repair leaves it
// unchanged.
//
// Why the summary is a user message: several OpenAI-compatible servers and
// chat templates accept a system message only at the start, and Anthropic's
// API has no mid-conversation system role, while every provider accepts a
// user message there. Its first line, [SummaryHeader], tells the model what
// it is reading.
//
// Only the agent (and tests) may import compact; it imports only
// internal/protocol and the standard library.
package compact
