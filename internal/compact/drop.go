package compact

import (
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// DroppedHeader is the first line of the marker DropOldest puts where it
// dropped messages.
const DroppedHeader = "[Earlier messages were dropped from this view to fit the context window]"

// DropOldest is the fallback when summarisation fails: it drops the oldest
// messages of view (after the frozen context and the summary message, which
// stay) until the view fits limit tokens, and puts a user message saying
// so, followed by note (normally a fresh [Ledger], so the task survives),
// where they were. It drops whole user turns where that fits, otherwise it
// cuts at the earliest cut point that fits — never between a tool call and
// its results. When even the last exchange alone does not fit, it keeps
// only that. It returns view itself and 0 when the view fits or nothing can
// be dropped, else a new view and the number of messages dropped; the
// caller checks the size again (and says so to the user).
func DropOldest(view []protocol.Message, limit int, est Estimator, note string) ([]protocol.Message, int) {
	pinned := frozenLen(view)
	if pinned < len(view) && isSummary(&view[pinned]) {
		pinned++
	}
	counts := make([]int, len(view))
	total := 0
	for i := range view {
		counts[i] = est(&view[i])
		total += counts[i]
	}
	if total <= limit || pinned >= len(view) {
		return view, 0
	}
	pinnedTokens := 0
	for i := range pinned {
		pinnedTokens += counts[i]
	}
	// The marker's size depends on the range it names only in a few
	// digits: weigh it with the widest range.
	probe := dropMarker(view[pinned:], note)
	budget := limit - pinnedTokens - est(&probe)

	// suffix[c] is the size of view[c:].
	suffix := make([]int, len(view)+1)
	for i := len(view) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + counts[i]
	}
	cp := newCuts(view, pinned)
	userAt, anyAt, lastAt := -1, -1, -1
	for c := pinned + 1; c < len(view); c++ {
		if !cp.ok(c) {
			continue
		}
		lastAt = c
		if suffix[c] > budget {
			continue
		}
		if anyAt < 0 {
			anyAt = c
		}
		if view[c].Role == protocol.RoleUser {
			userAt = c
			break
		}
	}
	at := userAt
	if at < 0 {
		at = anyAt
	}
	if at < 0 {
		at = lastAt
	}
	if at < 0 {
		return view, 0 // one exchange: nothing can go without splitting it
	}
	out := make([]protocol.Message, 0, pinned+1+len(view)-at)
	out = append(out, view[:pinned]...)
	out = append(out, dropMarker(view[pinned:at], note))
	out = append(out, view[at:]...)
	return out, at - pinned
}

// dropMarker returns the message that stands for the dropped messages.
func dropMarker(dropped []protocol.Message, note string) protocol.Message {
	var first, last int64
	for i := range dropped {
		if s := dropped[i].Seq; s > 0 {
			if first == 0 {
				first = s
			}
			last = s
		}
	}
	var b strings.Builder
	b.WriteString(DroppedHeader)
	fmt.Fprintf(&b, "\n%d messages", len(dropped))
	if first > 0 {
		fmt.Fprintf(&b, " (seq %d–%d)", first, last)
	}
	b.WriteString(" are not shown, and no summary of them could be made. The session keeps them all.\n")
	if note = strings.TrimSpace(note); note != "" {
		b.WriteString("\n")
		b.WriteString(note)
		b.WriteString("\n")
	}
	return protocol.Message{Role: protocol.RoleUser, Content: b.String()}
}
