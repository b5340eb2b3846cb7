package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// taskReplies start a general subagent that reads and edits main.go (the
// edit asks in the default mode) and answers, then the parent's answer.
func taskReplies() []llmtest.Reply {
	args, _ := json.Marshal(map[string]any{"description": "bump the version", "prompt": "Change v1 to v2 in main.go.", "subagent_type": "general"})
	return []llmtest.Reply{
		llmtest.Call("task", string(args)),
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"v1","new_string":"v2"}`),
		llmtest.Text("child done"),
		llmtest.Text("parent done"),
	}
}

// TestSubagentApprovalOnTheParentsStream: a subagent that a turn of the
// server started asks for approval; the parent's stream carries the
// request (the child's session id, parentSessionId, no SSE id of its
// own), the parent's detail lists it, and an answer through the parent's
// id or the child's lets the subagent go on.
func TestSubagentApprovalOnTheParentsStream(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"parent", "child"} {
		t.Run("answered through the "+via, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, taskReplies()...)
			f.writeWS("main.go", "package main // v1\n")
			s := f.newSession()
			c := f.stream(s.ID, "", "")
			c.until(protocol.EventStreamReady)
			f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "delegate the bump"}, nil, http.StatusAccepted)
			evs := c.until(protocol.EventPermissionRequested)
			req := evs[len(evs)-1]
			child := req.SessionID
			if child == s.ID || req.ParentSessionID != s.ID || req.ParentToolCallID == "" || req.ToolName != "edit_file" {
				t.Fatalf("permission.requested on the parent's stream: %+v", req)
			}
			var created, started bool
			for _, e := range evs {
				created = created || e.Type == protocol.EventSessionCreated && e.SessionID == child && e.Session != nil && e.Session.Agent == "general"
				started = started || e.Type == protocol.EventToolStarted && e.SessionID == s.ID && e.ToolName == "task" && e.ToolCallID == req.ParentToolCallID
			}
			if !created || !started {
				t.Errorf("the stream before the request (task started %v, subagent's session.created %v): %v", started, created, typesOf(evs))
			}
			var d protocol.SessionDetail
			f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
			if len(d.PendingApprovals) != 1 || d.PendingApprovals[0].ID != req.RequestID || d.PendingApprovals[0].SessionID != child {
				t.Fatalf("the parent's pending approvals: %+v", d.PendingApprovals)
			}
			path := "/api/sessions/" + s.ID + "/approvals/" + req.RequestID
			if via == "child" {
				path = "/api/sessions/" + child + "/approvals/" + req.RequestID
			}
			var out protocol.ApprovalAccepted
			f.mustAPI("POST", path, protocol.ApprovalAnswer{Decision: "allow"}, &out, http.StatusAccepted)
			if out.RequestID != req.RequestID {
				t.Errorf("answer accepted: %+v", out)
			}
			evs = c.until(protocol.EventTurnCompleted)
			for evs[len(evs)-1].SessionID != s.ID {
				evs = append(evs, c.until(protocol.EventTurnCompleted)...)
			}
			var resolved, childDone bool
			for _, e := range evs {
				resolved = resolved || e.Type == protocol.EventPermissionResolved && e.SessionID == child && e.RequestID == req.RequestID
				childDone = childDone || e.Type == protocol.EventTurnCompleted && e.SessionID == child
			}
			if !resolved || !childDone {
				t.Errorf("after the answer (resolved %v, subagent done %v): %v", resolved, childDone, typesOf(evs))
			}
			if got := f.readWS("main.go"); !strings.Contains(got, "v2") {
				t.Errorf("main.go after the approved subagent edit: %q", got)
			}
			f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
			if len(d.PendingApprovals) != 0 {
				t.Errorf("pending approvals after the answer: %+v", d.PendingApprovals)
			}
			// A reconnect replays the parent's stored events only: no
			// subagent event has an id on this stream to resume from.
			r := f.stream(s.ID, "?after=0", "")
			for _, e := range r.until(protocol.EventStreamReady) {
				if e.SessionID != s.ID && e.Type != protocol.EventStreamReady {
					t.Errorf("the replay holds a subagent's %s", e.Type)
				}
			}
		})
	}
}

// TestSubagentApprovalOfAnotherProcessReachesTheStream: a subagent of a
// turn another process runs (a terminal) asks for approval; the parent's
// stream shows the request from the store and the detail lists it, and
// the server's answer is stored for that process's waiting turn, which
// takes it and goes on there (the subagent's edit is made).
func TestSubagentApprovalOfAnotherProcessReachesTheStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, taskReplies()...)
	f.writeWS("main.go", "package main // v1\n")
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	term := f.openApp()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- term.Core.Run(ctx, agent.TurnRequest{SessionID: s.ID, Input: "delegate the bump", OnAsk: agent.AskWait}, nil)
	}()
	evs := c.until(protocol.EventPermissionRequested)
	req := evs[len(evs)-1]
	if req.SessionID == s.ID || req.ParentSessionID != s.ID || req.ToolName != "edit_file" {
		t.Fatalf("permission.requested on the parent's stream: %+v", req)
	}
	var d protocol.SessionDetail
	f.mustAPI("GET", "/api/sessions/"+s.ID, nil, &d, http.StatusOK)
	if len(d.PendingApprovals) != 1 || d.PendingApprovals[0].SessionID != req.SessionID {
		t.Fatalf("the parent's pending approvals: %+v", d.PendingApprovals)
	}
	resp, data := f.request("POST", "/api/sessions/"+s.ID+"/approvals/"+req.RequestID, protocol.ApprovalAnswer{Decision: "allow"}, f.auth())
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("answer to another process's subagent: status %d, want 202\n%s", resp.StatusCode, data)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the terminal's turn: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the terminal's turn did not go on after the answer")
	}
	if got := f.readWS("main.go"); !strings.Contains(got, "v2") {
		t.Errorf("main.go after the approved subagent edit: %q", got)
	}
}
