package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// editReplies read main.go, then edit it (which asks in the default
// mode), then answer.
func editReplies(done string) []llmtest.Reply {
	return []llmtest.Reply{
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"v1","new_string":"v2"}`),
		llmtest.Text(done),
	}
}

func (f *fixture) writeWS(name, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) readWS(name string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.ws, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

func TestApprovalAnsweredThroughTheAPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  protocol.ApprovalAnswer
		edited  bool
		result  string // in the edit's tool result
		granted bool
	}{
		{"allow once", protocol.ApprovalAnswer{Decision: "allow"}, true, "+package main // v2", false},
		{"allow always", protocol.ApprovalAnswer{Decision: "allow", Scope: "always"}, true, "+package main // v2", true},
		{"deny with a message", protocol.ApprovalAnswer{Decision: "deny", Message: "use v3 instead"}, false,
			"User rejected this tool call. The user said: use v3 instead", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, editReplies("done")...)
			f.writeWS("main.go", "package main // v1\n")
			s := f.newSession()
			c := f.stream(s.ID, "", "")
			c.until(protocol.EventStreamReady)
			var acc protocol.MessageAccepted
			f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "bump"}, &acc, http.StatusAccepted)
			evs := c.until(protocol.EventPermissionRequested)
			req := evs[len(evs)-1]
			if req.ToolName != "edit_file" || req.RequestID == "" {
				t.Fatalf("permission.requested %+v", req)
			}
			var d protocol.SessionDetail
			f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
			if len(d.PendingApprovals) != 1 || d.PendingApprovals[0].ID != req.RequestID || d.Session.Status != protocol.StatusWaitingForApproval {
				t.Fatalf("detail while waiting: %+v", d)
			}
			var out protocol.ApprovalAccepted
			f.mustAPI("POST", "/api/sessions/"+s.ID+"/approvals/"+req.RequestID, tc.answer, &out, http.StatusAccepted)
			if out.RequestID != req.RequestID || out.TurnID != acc.TurnID || out.Decision != tc.answer.Decision {
				t.Errorf("answer accepted: %+v", out)
			}
			evs = c.until(protocol.EventTurnCompleted)
			if !hasType(evs, protocol.EventPermissionResolved) {
				t.Errorf("no permission.resolved after the answer: %v", typesOf(evs))
			}
			if got := strings.Contains(f.readWS("main.go"), "v2"); got != tc.edited {
				t.Errorf("edited %v, want %v", got, tc.edited)
			}
			reqs := f.llm.ChatRequests()
			res := reqs[len(reqs)-1].Chat.Messages
			var editResult string
			for _, m := range res {
				if m.Role == "tool" && strings.Contains(m.Content, "main.go") || m.Role == "tool" && strings.Contains(m.Content, "rejected") {
					editResult = m.Content
				}
			}
			if !strings.Contains(editResult, tc.result) {
				t.Errorf("the model read %q, want %q in it", editResult, tc.result)
			}
			grants, _ := f.app.Store.Grants(context.Background(), f.ws)
			if (len(grants) > 0) != tc.granted {
				t.Errorf("project grants %+v, want some: %v", grants, tc.granted)
			}
			// Answering again: not pending any more.
			resp, data := f.request("POST", "/api/sessions/"+s.ID+"/approvals/"+req.RequestID, tc.answer, f.auth())
			checkError(t, "second answer", resp, data, http.StatusNotFound, protocol.CodeApprovalNotFound)
		})
	}
}

func TestApprovalPausedByAnotherProcessContinuesInTheServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, editReplies("edited here")...)
	f.writeWS("main.go", "package main // v1\n")
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	// A terminal (`mx-claw run --on-ask pause`) runs the turn and exits at
	// the approval.
	term := f.openApp()
	err := term.Core.Run(context.Background(), agent.TurnRequest{SessionID: s.ID, Input: "bump", OnAsk: agent.AskPause}, nil)
	var paused *agent.PausedError
	if !errors.As(err, &paused) {
		t.Fatalf("the terminal's turn: %v, want paused", err)
	}
	// The server's stream saw it (tailing the store).
	evs := c.until(protocol.EventTurnPaused)
	if !hasType(evs, protocol.EventPermissionRequested) {
		t.Errorf("the stream did not show the approval: %v", typesOf(evs))
	}
	var out protocol.ApprovalAccepted
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/approvals/"+paused.RequestID, protocol.ApprovalAnswer{Decision: "allow"}, &out, http.StatusAccepted)
	evs = c.until(protocol.EventTurnCompleted)
	if !strings.Contains(f.readWS("main.go"), "v2") {
		t.Error("the approved edit did not run")
	}
	var answer string
	for _, e := range evs {
		if e.Type == protocol.EventMessageCompleted && e.Message != nil && e.Message.Role == protocol.RoleAssistant {
			answer = e.Message.Content
		}
	}
	if answer != "edited here" {
		t.Errorf("the turn's answer %q", answer)
	}
	if st := f.waitIdle(s.ID); st.Status != protocol.StatusIdle {
		t.Errorf("status %s", st.Status)
	}
}

// An approval a turn of another process waits for (the REPL in a
// terminal) is answered here: 202, the answer is stored, and that turn
// takes it and goes on in its own process; the stream shows who answered
// and the rest of the turn. Cancel and model switch stay that process's.
func TestApprovalWaitedForInAnotherProcessIsAnsweredThere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, editReplies("edited from afar")...)
	f.writeWS("main.go", "package main // v1\n")
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	term := f.openApp()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	requested := make(chan protocol.Event, 1)
	done := make(chan error, 1)
	var mu sync.Mutex
	var termEvents []protocol.Event
	go func() {
		done <- term.Core.Run(ctx, agent.TurnRequest{SessionID: s.ID, Input: "bump", OnAsk: agent.AskWait}, func(e protocol.Event) {
			mu.Lock()
			termEvents = append(termEvents, e)
			mu.Unlock()
			if e.Type == protocol.EventPermissionRequested {
				requested <- e
			}
		})
	}()
	var req protocol.Event
	select {
	case req = <-requested:
	case <-time.After(20 * time.Second):
		t.Fatal("no approval requested")
	}
	resp, data := f.request("POST", "/api/sessions/"+s.ID+"/cancel", nil, f.auth())
	checkError(t, "cancel of another process's turn", resp, data, http.StatusConflict, protocol.CodeSessionBusy)
	resp, data = f.request("PUT", "/api/sessions/"+s.ID+"/model", protocol.SetModel{Model: "fake/other-model"}, f.auth())
	checkError(t, "model switch during another process's turn", resp, data, http.StatusConflict, protocol.CodeSessionBusy)

	var out protocol.ApprovalAccepted
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/approvals/"+req.RequestID, protocol.ApprovalAnswer{Decision: "allow"}, &out, http.StatusAccepted)
	if out.TurnID != req.TurnID {
		t.Errorf("accepted %+v, want the waiting turn %s", out, req.TurnID)
	}
	if err := <-done; err != nil {
		t.Fatalf("the terminal's turn: %v", err)
	}
	if !strings.Contains(f.readWS("main.go"), "v2") {
		t.Error("the approved edit did not run")
	}
	mu.Lock()
	_, answer := userAndAnswer(termEvents)
	mu.Unlock()
	if answer != "edited from afar" {
		t.Errorf("the terminal's turn ended with %q", answer)
	}
	evs := c.until(protocol.EventTurnCompleted)
	var resolved *protocol.Event
	for i, e := range evs {
		if e.Type == protocol.EventPermissionResolved {
			resolved = &evs[i]
		}
	}
	if resolved == nil || resolved.AnsweredBy != AnsweredBy || resolved.OK == nil || !*resolved.OK {
		t.Errorf("permission.resolved on the stream: %+v", resolved)
	}
	resp, data = f.request("POST", "/api/sessions/"+s.ID+"/approvals/"+req.RequestID, protocol.ApprovalAnswer{Decision: "deny"}, f.auth())
	checkError(t, "a second answer", resp, data, http.StatusNotFound, protocol.CodeApprovalNotFound)
}

func hasType(evs []protocol.Event, typ protocol.EventType) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
