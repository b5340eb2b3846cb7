package compact

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// parse builds a transcript from a small notation, one message per word:
//
//	S        system message
//	U        user message
//	A        assistant message without calls
//	A:a,b    assistant message calling a and b
//	T:a      result of call a (T!:a an error result)
//
// A suffix *N gives the message a weight of N tokens (default 10; see
// weights). Seq counts from 1.
func parse(t testing.TB, s string) ([]protocol.Message, map[int64]int) {
	t.Helper()
	var msgs []protocol.Message
	weights := map[int64]int{}
	for i, w := range strings.Fields(s) {
		seq := int64(i + 1)
		weight := 10
		if k := strings.IndexByte(w, '*'); k >= 0 {
			n, err := strconv.Atoi(w[k+1:])
			if err != nil {
				t.Fatalf("bad weight in %q", w)
			}
			weight, w = n, w[:k]
		}
		weights[seq] = weight
		kind, arg, _ := strings.Cut(w, ":")
		m := protocol.Message{Seq: seq, Content: fmt.Sprintf("m%d", seq)}
		switch kind {
		case "S":
			m.Role = protocol.RoleSystem
		case "U":
			m.Role = protocol.RoleUser
		case "A":
			m.Role = protocol.RoleAssistant
			if arg != "" {
				for _, id := range strings.Split(arg, ",") {
					m.ToolCalls = append(m.ToolCalls, protocol.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"a.go"}`})
				}
			}
		case "T", "T!":
			m.Role, m.ToolCallID, m.IsError = protocol.RoleTool, arg, kind == "T!"
		default:
			t.Fatalf("bad word %q", w)
		}
		msgs = append(msgs, m)
	}
	return msgs, weights
}

// weighted is an Estimator that reads the weights parse gave, and Approx
// for messages without one (Seq 0).
func weighted(w map[int64]int) Estimator {
	return func(m *protocol.Message) int {
		if n, ok := w[m.Seq]; ok && m.Seq > 0 {
			return n
		}
		return Approx(m)
	}
}

// referenceRepair is the agent's repairView (internal/agent/repair.go) on
// protocol messages, written independently of repairAppend: the oracle the
// tests hold Project to.
func referenceRepair(msgs []protocol.Message) []protocol.Message {
	var view []protocol.Message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case protocol.RoleTool:
			continue
		case protocol.RoleAssistant:
			view = append(view, m)
			if len(m.ToolCalls) == 0 {
				continue
			}
			results := map[string]protocol.Message{}
			j := i + 1
			for ; j < len(msgs) && msgs[j].Role == protocol.RoleTool; j++ {
				if _, dup := results[msgs[j].ToolCallID]; !dup {
					results[msgs[j].ToolCallID] = msgs[j]
				}
			}
			i = j - 1
			for _, c := range m.ToolCalls {
				if r, ok := results[c.ID]; ok {
					view = append(view, r)
				} else {
					view = append(view, protocol.Message{Role: protocol.RoleTool, ToolCallID: c.ID, Content: InterruptedResult})
				}
			}
		default:
			view = append(view, m)
		}
	}
	return view
}

// sameRequest reports whether two views send the same request: role,
// content, calls and call id of each message (what the agent's toLLM
// keeps).
func sameRequest(a, b []protocol.Message) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d messages, want %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Role != y.Role || x.Content != y.Content || x.ToolCallID != y.ToolCallID || fmt.Sprint(x.ToolCalls) != fmt.Sprint(y.ToolCalls) {
			return fmt.Errorf("message %d: got %+v, want %+v", i, x, y)
		}
	}
	return nil
}

// session builds realistic transcripts for the ledger tests and benchmarks.
type session struct {
	msgs []protocol.Message
	n    int // calls made, for ids
}

func (s *session) add(m protocol.Message) *protocol.Message {
	m.Seq = int64(len(s.msgs) + 1)
	s.msgs = append(s.msgs, m)
	return &s.msgs[len(s.msgs)-1]
}

func (s *session) system(text string) {
	s.add(protocol.Message{Role: protocol.RoleSystem, Content: text})
}
func (s *session) user(text string) { s.add(protocol.Message{Role: protocol.RoleUser, Content: text}) }
func (s *session) say(text string) {
	s.add(protocol.Message{Role: protocol.RoleAssistant, Content: text})
}

// call adds an assistant message with one call and its result.
func (s *session) call(name, args, result string, isErr bool) {
	s.n++
	id := fmt.Sprintf("call_%d", s.n)
	s.add(protocol.Message{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: id, Name: name, Arguments: args}}})
	s.add(protocol.Message{Role: protocol.RoleTool, ToolCallID: id, ToolName: name, Content: result, IsError: isErr})
}
