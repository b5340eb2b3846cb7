package compact

import "github.com/mx-claw/mx-claw/internal/protocol"

// Estimator returns the number of tokens message m takes in a request: its
// role, Content, tool calls and ToolCallID, not its Reasoning (which is
// never sent back).
//
// The functions of this package call it for every message they weigh, on
// every request, so for stored messages (Seq > 0) it should be served from
// a cache computed once per message (DESIGN §9). Messages this package makes
// have Seq 0 (the summary message, markers, filled-in results) and must be
// estimated afresh, never looked up by Seq. A result shortened by
// [CapToolResults] keeps its Seq; a Seq-keyed cache over-estimates it,
// which is safe.
type Estimator func(m *protocol.Message) int

// messageOverhead is what a message costs beyond its text in the chat
// format (role, separators), in tokens.
const messageOverhead = 4

// bytesPerToken is the conservative ratio Approx and the ledger's budgets
// use: code, JSON and non-Latin text often take fewer than four bytes per
// token.
const bytesPerToken = 3

// Approx is a rough, conservative Estimator: about one token per three
// bytes of what is sent, plus a small overhead per message and call. Use
// the model catalog's estimate where there is one; Approx is the fallback
// and what the tests use.
func Approx(m *protocol.Message) int {
	n := len(m.Content) + len(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + 8
	}
	return (n+bytesPerToken-1)/bytesPerToken + messageOverhead
}

// Counts returns est of every message of msgs, in order: the per-message
// counts [PlanCounts] takes. Keep the slice next to the transcript and
// append the count of each message as it is stored, so no message is
// estimated twice.
func Counts(msgs []protocol.Message, est Estimator) []int {
	out := make([]int, len(msgs))
	for i := range msgs {
		out[i] = est(&msgs[i])
	}
	return out
}
