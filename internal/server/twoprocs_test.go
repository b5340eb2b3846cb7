package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// userAndAnswer returns the user message and the assistant's answer of a
// turn's events.
func userAndAnswer(evs []protocol.Event) (user, answer string) {
	for _, e := range evs {
		if e.Type == protocol.EventMessageCompleted && e.Message != nil {
			switch e.Message.Role {
			case protocol.RoleUser:
				user = e.Message.Content
			case protocol.RoleAssistant:
				answer = e.Message.Content
			}
		}
	}
	return user, answer
}

func TestAnotherProcessesTurnReachesTheStreamAndAMessageWaitsForIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// first is the terminal's reply; the queued message gets "queued answer".
		first    llmtest.Reply
		firstEnd protocol.EventType
	}{
		// The terminal's turn ends well: the terminal sends the queued
		// message itself (its Core.Run goes on with the queue).
		{"terminal sends it", llmtest.Reply{Text: "terminal answer", Pieces: 8}, protocol.EventTurnCompleted},
		// The terminal's turn fails: the queued message is given back
		// (input.returned), sent by nobody (issue 18).
		{"given back", llmtest.Reply{Text: "cut", Pieces: 8, ErrorEvent: "provider broke"}, protocol.EventTurnFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The terminal's answer waits until the browser's message is
			// in, however slow the machine.
			gate := make(chan struct{})
			tc.first.Gate = gate
			f := newFixture(t, nil, tc.first, llmtest.Text("queued answer"))
			s := f.newSession()
			c := f.stream(s.ID, "", "")
			replayed := c.until(protocol.EventStreamReady)
			term := f.openApp()
			done := make(chan error, 1)
			go func() {
				done <- term.Core.Run(context.Background(), agent.TurnRequest{SessionID: s.ID, Input: "from the terminal"}, nil)
			}()
			// The stream shows the terminal's turn (stored events only).
			evs := c.until(protocol.EventTurnStarted)
			if evs[len(evs)-1].TurnID == "" {
				t.Fatal("turn.started without a turn")
			}
			var acc protocol.MessageAccepted
			f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "from the browser"}, &acc, http.StatusAccepted)
			if !acc.Queued {
				t.Fatalf("message during another process's turn: %+v, want queued", acc)
			}
			var list protocol.QueuedList
			f.mustAPI("GET", "/api/sessions/"+s.ID+"/queued", nil, &list, http.StatusOK)
			close(gate)
			first := c.until(tc.firstEnd)
			// input.queued carries the queued message with its id: a
			// client need not read the list again.
			for _, e := range first {
				if e.Type == protocol.EventInputQueued && (len(e.Queued) != 1 || len(list.Queued) != 1 ||
					e.Queued[0].ID != list.Queued[0].ID || e.Queued[0].Content != "from the browser") {
					t.Errorf("input.queued %+v; the queue is %+v", e.Queued, list.Queued)
				}
			}
			if u, _ := userAndAnswer(first); u != "from the terminal" {
				t.Errorf("first turn's user message %q", u)
			}
			if !hasType(first, protocol.EventInputQueued) {
				t.Errorf("the stream did not show the message queued: %v", typesOf(first))
			}
			var second []protocol.Event
			if tc.firstEnd == protocol.EventTurnFailed {
				if !hasType(first, protocol.EventInputReturned) {
					t.Errorf("the failed turn did not give the queued message back: %v", typesOf(first))
				}
				<-done
				if n := len(f.llm.ChatRequests()); n != 1 {
					t.Errorf("%d model requests: the given-back message was sent", n)
				}
			} else {
				second = c.until(protocol.EventTurnCompleted)
				if u, a := userAndAnswer(second); u != "from the browser" || a != "queued answer" {
					t.Errorf("after the terminal's turn: user %q, answer %q", u, a)
				}
				<-done
			}
			// Exactly the stored events, in order, reached the stream.
			want := f.storedEvents(s.ID)
			all := append(append(append(replayed, evs...), first...), second...)
			var seqs []int64
			for _, e := range all {
				if stored(e) {
					seqs = append(seqs, e.Sequence)
				}
			}
			if len(seqs) != len(want) {
				t.Fatalf("stream sequence %v, want the store's %d events", seqs, len(want))
			}
			for i, seq := range seqs {
				if seq != want[i].Sequence {
					t.Fatalf("stream sequence %v, want the store's", seqs)
				}
			}
		})
	}
}
