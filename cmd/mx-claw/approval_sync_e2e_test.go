package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// TestREPLApprovalAnsweredElsewhere: the REPL in a terminal waits on an
// approval; it is answered through a real `mx-claw serve` (the web
// panel's route), and later by `mx-claw reject` in a third process. Each
// time the REPL's prompt closes and says who answered, and the turn goes
// on in the REPL's process: the command runs there and the answer streams
// there (the REPL shows only its own turns' events). DESIGN §11's
// "approval prompts nobody sees".
func TestREPLApprovalAnsweredElsewhere(t *testing.T) {
	e := newEnv(t,
		llmtest.Call("run_command", `{"command":"touch yes.txt"}`),
		llmtest.Text("made it, approved from afar"),
		llmtest.Call("run_command", `{"command":"touch no.txt"}`),
		llmtest.Text("understood, not now"),
	)
	p := e.startTUI()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := e.startServe(ctx)

	p.typeLine("make yes.txt")
	p.waitFor("[y] yes", 20*time.Second)
	id, rid := waitingApproval(t, srv)
	stream := srv.events(ctx, id)
	collect(t, stream, protocol.EventStreamReady, 1)
	var out protocol.ApprovalAccepted
	if st := srv.api("POST", "/api/sessions/"+id+"/approvals/"+rid, protocol.ApprovalAnswer{Decision: "allow"}, &out); st != 202 {
		t.Fatalf("the server's answer: %d %+v", st, out)
	}
	s := p.waitFor("made it, approved from afar", 20*time.Second)
	if !strings.Contains(s, "Allowed by the web panel") || strings.Contains(s, "[y] yes") {
		t.Errorf("the REPL does not show who answered, or still asks:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "yes.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	// The server's stream follows the REPL's turn from the store.
	evs := collect(t, stream, protocol.EventTurnCompleted, 1)
	var by string
	for _, ev := range evs {
		if ev.Type == protocol.EventPermissionResolved {
			by = ev.AnsweredBy
		}
	}
	if by != "the web panel" {
		t.Errorf("permission.resolved on the server's stream says %q answered", by)
	}
	if st := srv.api("POST", "/api/sessions/"+id+"/approvals/"+rid, protocol.ApprovalAnswer{Decision: "deny"}, nil); st != 404 {
		t.Errorf("a second answer: %d, want 404", st)
	}

	// Rejected from a third process, with a message for the model.
	p.typeLine("make no.txt")
	p.waitFor("[y] yes", 20*time.Second)
	_, rid = waitingApproval(t, srv)
	r := e.run("", "reject", id, rid, "--message", "not now")
	if r.code != 0 || !strings.Contains(r.stdout, "goes on in the process that waits") {
		t.Fatalf("mx-claw reject: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s = p.waitFor("understood, not now", 20*time.Second)
	if !strings.Contains(s, "Denied by mx-claw reject: not now") {
		t.Errorf("the REPL does not show the rejection and who gave it:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "no.txt")); err == nil {
		t.Error("the rejected command ran")
	}
	reqs := e.srv.ChatRequests()
	if got := strings.Join(mapValues(toolResults(reqs[len(reqs)-1])), "\n"); !strings.Contains(got, "User rejected this tool call. The user said: not now") {
		t.Errorf("the model was not told of the rejection: %q", got)
	}
	p.keys("C-d")
	p.waitFor("EXITED=0", 10*time.Second)
	srv.stop()
}

// waitingApproval returns the session that waits for an approval, as the
// server lists it, and the approval's id.
func waitingApproval(t *testing.T, srv *served) (string, string) {
	t.Helper()
	for end := time.Now().Add(patience); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var list protocol.SessionList
		srv.api("GET", "/api/sessions", nil, &list)
		for _, s := range list.Sessions {
			var d protocol.SessionDetail
			srv.api("GET", "/api/sessions/"+s.ID, nil, &d)
			if len(d.PendingApprovals) == 1 {
				return s.ID, d.PendingApprovals[0].ID
			}
		}
	}
	t.Fatal("the server lists no session waiting for an approval")
	return "", ""
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
