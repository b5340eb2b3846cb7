package llmtest

import (
	"fmt"
	"strings"
	"testing"
)

// CheckChat reports the first way msgs breaks the pairing rules real
// providers enforce on a chat request (DESIGN §2, invariant 2: every tool
// call gets a result), or nil:
//
//   - every tool message follows its assistant call: it is in the block of
//     tool messages right after an assistant message, and answers one of
//     that message's calls;
//   - every call has exactly one result, and the results come in the
//     order of the calls.
//
// Providers answer such a request with 400 (OpenAI: "An assistant message
// with 'tool_calls' must be followed by tool messages responding to each
// 'tool_call_id'"); an agent must repair its transcript before it sends
// it, so a test server that lets it through would hide the bug.
func CheckChat(msgs []ChatMessage) error {
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		if m.Role == "tool" {
			return fmt.Errorf("messages[%d]: a message with role 'tool' (tool_call_id %q) must answer a call of the assistant message right before its block of results", i, m.ToolCallID)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		for k, c := range m.ToolCalls {
			for _, d := range m.ToolCalls[:k] {
				if d.ID == c.ID {
					return fmt.Errorf("messages[%d]: two tool calls have the id %q", i, c.ID)
				}
			}
			j := i + 1 + k
			if j >= len(msgs) || msgs[j].Role != "tool" {
				var missing []string
				for _, c := range m.ToolCalls[k:] {
					missing = append(missing, c.ID)
				}
				return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; these have none: %s", i, strings.Join(missing, ", "))
			}
			if got := msgs[j].ToolCallID; got != c.ID {
				return fmt.Errorf("messages[%d]: the result for call %q (call %d of messages[%d]) has tool_call_id %q: every call needs exactly one result, in the order of the calls", j, c.ID, k+1, i, got)
			}
		}
		i += len(m.ToolCalls)
	}
	return nil
}

// Violations returns what CheckChat found wrong with the chat requests
// received so far, one line per request, in arrival order.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// CheckRequests says whether chat requests are checked with CheckChat
// (the default): a request that breaks the rules is recorded, answered
// 400 as a provider would, and listed by Violations. Turn it off only
// for a test that sends such requests on purpose.
func (s *Server) CheckRequests(on bool) {
	s.mu.Lock()
	s.noChecks = !on
	s.mu.Unlock()
}

// check runs CheckChat on a recorded chat request and reports the
// violation, if any.
func (s *Server) check(req *Request) error {
	s.mu.Lock()
	off := s.noChecks
	s.mu.Unlock()
	if off || req.Chat == nil {
		return nil
	}
	err := CheckChat(req.Chat.Messages)
	if err != nil {
		s.mu.Lock()
		s.violations = append(s.violations, fmt.Sprintf("request %d: %v", len(s.requests), err))
		s.mu.Unlock()
	}
	return err
}

// NewTestServer is NewServer for a test: it closes the server when the
// test ends, and fails the test then if any chat request broke the rules
// CheckChat enforces. Agent and end-to-end tests get the check for free
// by building their fake model with it.
func NewTestServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := NewServer(replies...)
	t.Cleanup(func() {
		s.Close()
		if v := s.Violations(); len(v) > 0 {
			t.Errorf("the fake model received %d chat requests a provider would refuse (400):\n%s",
				len(v), strings.Join(v, "\n"))
		}
	})
	return s
}
