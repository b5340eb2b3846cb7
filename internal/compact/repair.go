package compact

import (
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// InterruptedResult is the tool result put in the view for a call whose
// result was never recorded. It is the agent's text (DESIGN §2 invariant
// 2), repeated here so compact need not import the agent; the two must stay
// equal.
const InterruptedResult = "Tool execution was interrupted before a result was recorded. This call must be retried if still needed."

// ErrUnpaired is matched (with errors.Is) by the errors of [CheckPairing].
var ErrUnpaired = errors.New("tool calls and results are not paired")

// repairAppend appends msgs to dst repaired the way the agent repairs a
// transcript: every assistant tool call is followed by exactly one result,
// in call order; tool messages not in the block right after their
// assistant message (orphans) and second results for one call are dropped;
// missing results are filled with InterruptedResult (Seq 0).
func repairAppend(dst, msgs []protocol.Message) []protocol.Message {
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch {
		case m.Role == protocol.RoleTool:
			continue // an orphan
		case m.Role == protocol.RoleAssistant && len(m.ToolCalls) > 0:
			dst = append(dst, *m)
			j := i + 1
			for j < len(msgs) && msgs[j].Role == protocol.RoleTool {
				j++
			}
			block := msgs[i+1 : j]
			for _, c := range m.ToolCalls {
				if r := resultFor(block, c.ID); r != nil {
					dst = append(dst, *r)
				} else {
					dst = append(dst, protocol.Message{Role: protocol.RoleTool, ToolCallID: c.ID,
						ToolName: c.Name, Content: InterruptedResult, IsError: true, TurnID: m.TurnID})
				}
			}
			i = j - 1
		default:
			dst = append(dst, *m)
		}
	}
	return dst
}

// resultFor returns the first message of block answering the call id, or
// nil.
func resultFor(block []protocol.Message, id string) *protocol.Message {
	for k := range block {
		if block[k].ToolCallID == id {
			return &block[k]
		}
	}
	return nil
}

// CheckPairing reports whether view keeps the repair invariant: each
// assistant message with tool calls is followed directly by one tool
// result per call, in call order, and no tool result appears anywhere
// else. Views built by [Project], [CapToolResults] and [DropOldest] always
// pass; the error names the first offending message.
func CheckPairing(view []protocol.Message) error {
	for i := 0; i < len(view); i++ {
		m := &view[i]
		if m.Role == protocol.RoleTool {
			return fmt.Errorf("%w: message %d (seq %d) is a result for %q that follows no call", ErrUnpaired, i, m.Seq, m.ToolCallID)
		}
		if m.Role != protocol.RoleAssistant {
			continue
		}
		for k, c := range m.ToolCalls {
			j := i + 1 + k
			if j >= len(view) || view[j].Role != protocol.RoleTool {
				return fmt.Errorf("%w: call %q of message %d (seq %d) has no result", ErrUnpaired, c.ID, i, m.Seq)
			}
			if view[j].ToolCallID != c.ID {
				return fmt.Errorf("%w: message %d answers %q where call %q of message %d is due", ErrUnpaired, j, view[j].ToolCallID, c.ID, i)
			}
		}
		i += len(m.ToolCalls)
	}
	return nil
}
