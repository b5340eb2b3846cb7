package server

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// accepted reports whether a session's detail has text queued or in a
// user message (alone or joined with others): the rule of doc.go for a
// client that lost the answer to its post.
func accepted(d protocol.SessionDetail, text string) bool {
	for _, q := range d.Queued {
		if q.Content == text {
			return true
		}
	}
	for _, m := range d.Messages {
		if m.Role == protocol.RoleUser && slices.Contains(strings.Split(m.Content, "\n\n"), text) {
			return true
		}
	}
	return false
}

// TestDetailFindsAMessageAcceptedByADeadWorker: a worker queued a posted
// message and died before it answered (the multi-worker e2e sent such a
// message twice: its client, finding it in no transcript, posted it
// again). The session's detail lists the queue, so the client finds it;
// and while another worker sends it, every detail has it queued or
// stored, never neither.
func TestDetailFindsAMessageAcceptedByADeadWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "answer", Pieces: 4, ChunkDelay: 30 * time.Millisecond})
	s := f.newSession()
	f.leaveBehind(s.ID, true, []*protocol.Message{{Role: protocol.RoleUser, Content: "first"},
		{Role: protocol.RoleAssistant, Content: "first answer"}}, "posted to the dead worker")

	var d protocol.SessionDetail
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
	if len(d.Queued) != 1 || d.Queued[0].Content != "posted to the dead worker" {
		t.Fatalf("detail's queue = %+v, want the message the dead worker accepted", d.Queued)
	}

	// Read the detail over and over while takeover sends the message.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var missed []string
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			var d protocol.SessionDetail
			f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
			if !accepted(d, "posted to the dead worker") {
				missed = append(missed, string(d.Session.Status))
			}
		}
	})
	f.srv.takeOverOnce(time.Second)
	f.waitIdle(s.ID)
	close(stop)
	wg.Wait()
	if len(missed) > 0 {
		t.Errorf("%d details had the message neither queued nor stored (statuses %q)", len(missed), missed)
	}
	d = protocol.SessionDetail{} // "queued" is absent when nothing is
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
	if len(d.Queued) != 0 || !accepted(d, "posted to the dead worker") {
		t.Errorf("after takeover: queued %+v, messages %+v; want it stored", d.Queued, d.Messages)
	}
	if users := f.userContents(s.ID); !slices.Equal(users, []string{"first", "posted to the dead worker"}) {
		t.Errorf("user messages %q, want the message once", users)
	}
}
