package compact

import (
	"fmt"
	"slices"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ReadToolOutputTool is the name of the tool the marker of a cut tool
// result tells the model to call for the full text.
const ReadToolOutputTool = "read_tool_output"

// CapToolResults returns view with every tool result larger than share ×
// window tokens cut to about that size: its head and its tail, with a
// marker naming the message's Seq so the model can fetch the whole text
// with the ReadToolOutputTool tool, e.g.
//
//	[… 41250 tokens omitted; the full output is kept: call read_tool_output with seq=123 …]
//
// Only the view changes, never the store. share <= 0 means
// DefaultToolResultShare. view itself is returned when nothing is cut;
// otherwise a copy, so the caller's slice is never modified. est is called
// only for tool results longer in bytes than the cap in tokens.
func CapToolResults(view []protocol.Message, window int, share float64, est Estimator) []protocol.Message {
	if share <= 0 {
		share = DefaultToolResultShare
	}
	limit := int(share * float64(window))
	if limit <= capMarkerTokens {
		return view
	}
	var out []protocol.Message
	for i := range view {
		m := &view[i]
		// A token is at least a byte: a short result cannot be too big.
		if m.Role != protocol.RoleTool || len(m.Content)+len(m.ToolCallID) <= limit-messageOverhead {
			continue
		}
		n := est(m)
		if n <= limit {
			continue
		}
		if out == nil {
			out = slices.Clone(view)
		}
		out[i].Content = capContent(m.Content, m.Seq, n, limit)
	}
	if out == nil {
		return view
	}
	return out
}

// capContent cuts content, which takes n tokens, to about limit tokens.
func capContent(content string, seq int64, n, limit int) string {
	keep := limit - capMarkerTokens
	keepBytes := int(int64(len(content)) * int64(keep) / int64(n))
	return cutMiddle(content, keepBytes, func(omitted int) string {
		tokens := int(int64(omitted) * int64(n) / int64(max(len(content), 1)))
		if seq <= 0 {
			return fmt.Sprintf("[… %d tokens omitted …]", tokens)
		}
		return fmt.Sprintf("[… %d tokens omitted; the full output is kept: call %s with seq=%d …]", tokens, ReadToolOutputTool, seq)
	})
}
