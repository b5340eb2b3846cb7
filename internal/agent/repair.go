package agent

import (
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// InterruptedResult is the tool result put in the model's view for a call
// whose result was never recorded (the process died, or the turn stopped).
const InterruptedResult = "Tool execution was interrupted before a result was recorded. This call must be retried if still needed."

// repairView turns a stored transcript into the messages sent to the model.
// Every assistant tool call is followed by exactly one result, in call
// order: results answering no pending call (orphans) and second results for
// one call (duplicates) are dropped, missing ones are filled with
// InterruptedResult. Reasoning is never sent back. The stored transcript is
// not changed.
func repairView(msgs []protocol.Message) []llm.Message {
	view := make([]llm.Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case protocol.RoleTool:
			// A tool result not directly after its assistant message is an
			// orphan.
			continue
		case protocol.RoleAssistant:
			view = append(view, toLLM(m))
			if len(m.ToolCalls) == 0 {
				continue
			}
			// Collect the tool results that follow.
			results := make(map[string]*protocol.Message, len(m.ToolCalls))
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == protocol.RoleTool; j++ {
				if _, dup := results[msgs[j].ToolCallID]; !dup {
					results[msgs[j].ToolCallID] = &msgs[j]
				}
			}
			i = j - 1
			for _, c := range m.ToolCalls {
				if r, ok := results[c.ID]; ok {
					view = append(view, toLLM(r))
				} else {
					view = append(view, llm.Message{Role: string(protocol.RoleTool), ToolCallID: c.ID, Content: InterruptedResult})
				}
			}
		default:
			view = append(view, toLLM(m))
		}
	}
	return view
}

// toLLM converts one stored message into its request form.
func toLLM(m *protocol.Message) llm.Message {
	out := llm.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Images: llmImages(m.Images)}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]llm.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		}
	}
	return out
}
