package compact

import "github.com/mx-claw/mx-claw/internal/protocol"

// frozenLen returns the length of the frozen context: the leading system
// messages (system prompt, AGENTS.md, skill index, memory snapshot), which
// no compaction replaces.
func frozenLen(msgs []protocol.Message) int {
	n := 0
	for n < len(msgs) && msgs[n].Role == protocol.RoleSystem {
		n++
	}
	return n
}

// keptStart returns the index of the first message after the frozen
// context that rec does not replace: the first with Seq > rec.UpToSeq.
// Everything from there on is kept, even messages not yet given a Seq.
func keptStart(msgs []protocol.Message, frozen int, rec *Record) int {
	if rec == nil {
		return frozen
	}
	for i := frozen; i < len(msgs); i++ {
		if msgs[i].Seq > rec.UpToSeq {
			return i
		}
	}
	return len(msgs)
}

// cuts tells the cut points of msgs[lo:]. A cut point is an index i such
// that the messages before i can leave the view without touching any pair:
// msgs[i] is not a tool result (so i is not inside the block of results
// that follows an assistant message; len(msgs) is a cut point too), and no
// tool result at or after i answers a call made before i. With the first
// rule, the second matters only for results that are not in their call's
// block (orphans, which repair drops anyway); they are rare, so the common
// case costs no allocation.
type cuts struct {
	msgs    []protocol.Message
	lo      int
	crossed []bool // crossed[i-lo]: a result at or after i answers a call before i; nil if none
}

func newCuts(msgs []protocol.Message, lo int) cuts {
	c := cuts{msgs: msgs, lo: lo}
	if hasOrphans(msgs, lo) {
		c.crossed = crossings(msgs, lo)
	}
	return c
}

// ok reports whether i is a cut point.
func (c *cuts) ok(i int) bool {
	if i >= len(c.msgs) {
		return true
	}
	if c.msgs[i].Role == protocol.RoleTool {
		return false
	}
	return c.crossed == nil || !c.crossed[i-c.lo]
}

// hasOrphans reports whether msgs[lo:] has a tool result that is not in
// the block right after an assistant message with a call of its id.
func hasOrphans(msgs []protocol.Message, lo int) bool {
	var calls []protocol.ToolCall // of the assistant message owning the current block
	for i := lo; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case protocol.RoleTool:
			if !hasCall(calls, m.ToolCallID) {
				return true
			}
		case protocol.RoleAssistant:
			calls = m.ToolCalls
		default:
			calls = nil
		}
	}
	return false
}

func hasCall(calls []protocol.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// crossings marks, for every tool result in msgs[lo:] answering a call
// made earlier in msgs[lo:], the indices after the call up to the result:
// no cut may fall there. When several calls share an id the earliest
// counts, which is the cautious choice.
func crossings(msgs []protocol.Message, lo int) []bool {
	first := make(map[string]int)
	diff := make([]int, len(msgs)-lo+1)
	for i := lo; i < len(msgs); i++ {
		m := &msgs[i]
		switch m.Role {
		case protocol.RoleAssistant:
			for _, c := range m.ToolCalls {
				if _, seen := first[c.ID]; !seen {
					first[c.ID] = i
				}
			}
		case protocol.RoleTool:
			if a, ok := first[m.ToolCallID]; ok {
				diff[a+1-lo]++
				diff[i+1-lo]--
			}
		}
	}
	out := make([]bool, len(msgs)-lo)
	run := 0
	for k := range out {
		run += diff[k]
		out[k] = run > 0
	}
	return out
}
