package compact

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// summarizePrompt is the system prompt of a summarisation request.
//
//go:embed prompts/summarize.md
var summarizePrompt string

// Sizes used to fit a summarisation request, in tokens.
const (
	// renderOverhead is what the header line of a rendered message adds.
	renderOverhead = 12
	// minMessageTokens is the least a message is cut to before messages
	// are left out altogether.
	minMessageTokens = 48
)

// SummaryRequest returns the messages that ask a model to summarise
// toSummarise (a Cut's Messages) into a handover note: a system message
// with the summarisation prompt and one user message holding prev's
// summary (so summaries chain), the messages rendered as text and the
// user's instructions of a manual compaction. Rendering them as text
// rather than replaying them keeps the request free of tool calls, so it
// needs no tool schemas and no pairing.
//
// When maxInputTokens > 0 the request is made to fit it: long tool results
// are cut (head and tail) first, to a common size; then other long
// messages; then, as a last resort, messages from the middle of the range
// are left out with a marker. est weighs the given messages and, for the
// fitting, the request's own parts (Seq 0).
func SummaryRequest(prev *Record, toSummarise []protocol.Message, instructions string, maxInputTokens int, est Estimator) []protocol.Message {
	sys := protocol.Message{Role: protocol.RoleSystem, Content: strings.TrimSpace(summarizePrompt)}
	prevSummary := ""
	var prevUpTo int64
	if prev != nil {
		prevSummary = strings.TrimSpace(prev.Summary)
		prevUpTo = prev.UpToSeq
	}
	instructions = strings.TrimSpace(instructions)
	if maxInputTokens > 0 && prevSummary != "" {
		// A previous summary gets at most a quarter of the request.
		m := protocol.Message{Role: protocol.RoleUser, Content: prevSummary}
		if n := est(&m); n > maxInputTokens/4 {
			prevSummary = cutMiddle(prevSummary, len(prevSummary)*(maxInputTokens/4)/n, func(int) string {
				return "[… part of the previous summary omitted …]"
			})
		}
	}

	rendered := make([]string, len(toSummarise))
	for i := range toSummarise {
		rendered[i] = render(&toSummarise[i])
	}
	var parts []string
	if maxInputTokens <= 0 {
		parts = rendered
	} else {
		head := protocol.Message{Role: protocol.RoleUser, Content: summaryUserText(prevSummary, prevUpTo, nil, toSummarise, instructions)}
		avail := maxInputTokens - est(&sys) - est(&head) - maxInputTokens/50 - 16
		parts = fitRendered(toSummarise, rendered, avail, est)
	}
	user := protocol.Message{Role: protocol.RoleUser, Content: summaryUserText(prevSummary, prevUpTo, parts, toSummarise, instructions)}
	return []protocol.Message{sys, user}
}

// summaryUserText assembles the user message of a summarisation request.
func summaryUserText(prevSummary string, prevUpTo int64, parts []string, msgs []protocol.Message, instructions string) string {
	var b strings.Builder
	n := len(instructions) + len(prevSummary) + 400
	for _, p := range parts {
		n += len(p)
	}
	b.Grow(n)
	b.WriteString("Write the handover note for the conversation below, as your instructions say.\n")
	if prevSummary != "" {
		fmt.Fprintf(&b, "\n## Previous summary\n\nThis summary covers the conversation before seq %d. Merge it into your note.\n\n", prevUpTo+1)
		b.WriteString(prevSummary)
		b.WriteString("\n")
	}
	b.WriteString("\n## Conversation to summarise")
	if len(msgs) > 0 {
		fmt.Fprintf(&b, " (seq %d–%d)", msgs[0].Seq, msgs[len(msgs)-1].Seq)
	}
	b.WriteString("\n\n")
	for _, p := range parts {
		b.WriteString(p)
	}
	if instructions != "" {
		b.WriteString("\n## The user's instructions for this summary\n\n")
		b.WriteString(instructions)
		b.WriteString("\n")
	}
	b.WriteString("\nNow write the handover note.\n")
	return b.String()
}

// render shows one message as text for the summariser.
func render(m *protocol.Message) string {
	var b strings.Builder
	b.Grow(len(m.Content) + 64)
	fmt.Fprintf(&b, "[seq %d] ", m.Seq)
	switch m.Role {
	case protocol.RoleTool:
		fmt.Fprintf(&b, "tool result for %s", m.ToolCallID)
		if m.ToolName != "" {
			fmt.Fprintf(&b, " (%s)", m.ToolName)
		}
		if m.IsError {
			b.WriteString(", an error")
		}
	default:
		b.WriteString(string(m.Role))
	}
	b.WriteString(":\n")
	if c := strings.TrimRight(m.Content, "\n"); c != "" {
		b.WriteString(c)
		b.WriteString("\n")
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, "→ calls %s (%s) with %s\n", c.Name, c.ID, c.Arguments)
	}
	b.WriteString("\n")
	return b.String()
}

// fitRendered returns the rendered messages cut so that together they take
// about avail tokens at most: tool results first, to a common level; then
// every message; then messages from the middle are left out.
func fitRendered(msgs []protocol.Message, rendered []string, avail int, est Estimator) []string {
	counts := make([]int, len(msgs))
	total := 0
	for i := range msgs {
		counts[i] = est(&msgs[i]) + renderOverhead
		total += counts[i]
	}
	if total <= avail {
		return rendered
	}
	isTool := func(i int) bool { return msgs[i].Role == protocol.RoleTool }
	all := func(int) bool { return true }
	allow := make([]int, len(msgs))
	if x, ok := level(counts, isTool, avail); ok {
		capTo(allow, counts, isTool, x)
	} else if x, ok := level(counts, all, avail); ok {
		capTo(allow, counts, all, x)
	} else {
		capTo(allow, counts, all, minMessageTokens)
		return leaveOutMiddle(msgs, cutAll(rendered, counts, allow), allow, avail)
	}
	return cutAll(rendered, counts, allow)
}

// level returns the largest x >= minMessageTokens such that the counts,
// those chosen by capped limited to x, sum to at most avail.
func level(counts []int, capped func(int) bool, avail int) (int, bool) {
	sum := func(x int) int {
		s := 0
		for i, c := range counts {
			if capped(i) {
				c = min(c, x)
			}
			s += c
		}
		return s
	}
	if sum(minMessageTokens) > avail {
		return 0, false
	}
	lo, hi := minMessageTokens, max(minMessageTokens, slicesMax(counts))
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if sum(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, true
}

func slicesMax(s []int) int {
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func capTo(allow, counts []int, capped func(int) bool, x int) {
	for i, c := range counts {
		allow[i] = c
		if capped(i) {
			allow[i] = min(c, x)
		}
	}
}

// cutAll cuts every rendered message to its allowance.
func cutAll(rendered []string, counts, allow []int) []string {
	out := make([]string, len(rendered))
	for i, r := range rendered {
		out[i] = r
		if allow[i] < counts[i] {
			n := counts[i]
			out[i] = cutMiddle(r, len(r)*allow[i]/n, func(omitted int) string {
				return fmt.Sprintf("[… %d tokens omitted …]", omitted*n/max(len(r), 1))
			}) + "\n"
		}
	}
	return out
}

// leaveOutMiddle keeps messages from both ends of the range, alternately,
// while they fit avail, and puts a marker for the rest.
func leaveOutMiddle(msgs []protocol.Message, parts []string, allow []int, avail int) []string {
	avail -= 40             // the marker
	lo, hi := 0, len(parts) // parts[:lo] and parts[hi:] are kept
	for lo < hi {
		i := lo
		if (lo+len(parts)-hi)%2 == 1 {
			i = hi - 1
		}
		if allow[i] > avail {
			break
		}
		avail -= allow[i]
		if i == lo {
			lo++
		} else {
			hi--
		}
	}
	if lo == hi {
		return parts
	}
	out := make([]string, 0, lo+1+len(parts)-hi)
	out = append(out, parts[:lo]...)
	out = append(out, fmt.Sprintf("[… %d messages (seq %d–%d) left out to fit this request …]\n\n", hi-lo, msgs[lo].Seq, msgs[hi-1].Seq))
	return append(out, parts[hi:]...)
}
