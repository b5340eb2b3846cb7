package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// served is a running `mx-claw serve` process.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	info   protocol.ServerInfo
	stdout *bytes.Buffer
	stderr *bytes.Buffer
}

// startServe starts `mx-claw serve` on a free loopback port and waits for
// its server.json.
func (e *env) startServe(ctx context.Context, args ...string) *served {
	e.t.Helper()
	cmd := e.command(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s := &served{t: e.t, cmd: cmd, stdout: &out, stderr: &errb}
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	path := filepath.Join(e.home, "server.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &s.info) == nil && s.info.PID == cmd.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no server.json of the server after 30 s\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		e.t.Fatalf("server.json: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if !strings.HasPrefix(s.info.URL, "http://127.0.0.1:") || len(s.info.Token) != 64 {
		e.t.Fatalf("server.json %+v", s.info)
	}
	return s
}

// api sends an authorized JSON request and decodes the answer into out.
func (s *served) api(method, path string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, s.info.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.info.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode
}

// events follows a session's event stream from the start; the channel
// closes when the stream ends.
func (s *served) events(ctx context.Context, id string) <-chan protocol.Event {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.info.URL+"/api/sessions/"+id+"/events?after=0", nil)
	req.Header.Set("Authorization", "Bearer "+s.info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		s.t.Fatalf("event stream: %d", resp.StatusCode)
	}
	ch := make(chan protocol.Event, 4096)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		r := sse.NewReader(bufio.NewReader(resp.Body))
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			var e protocol.Event
			if json.Unmarshal([]byte(ev.Data), &e) == nil {
				ch <- e
			}
		}
	}()
	return ch
}

// collect reads events until n events of type typ have come.
func collect(t *testing.T, ch <-chan protocol.Event, typ protocol.EventType, n int) []protocol.Event {
	t.Helper()
	var out []protocol.Event
	timeout := time.After(60 * time.Second)
	for n > 0 {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended; waiting for %s, got %v", typ, eventTypes(out))
			}
			out = append(out, e)
			if e.Type == typ {
				n--
			}
		case <-timeout:
			t.Fatalf("no %s in 60 s; got %v", typ, eventTypes(out))
		}
	}
	return out
}

func eventTypes(evs []protocol.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

// storedOnly keeps the stored session events (not deltas, not stream.*).
func storedOnly(evs []protocol.Event) []protocol.Event {
	var out []protocol.Event
	for _, e := range evs {
		if e.Sequence > 0 && e.Type.Stored() && !strings.HasPrefix(string(e.Type), "stream.") {
			out = append(out, e)
		}
	}
	return out
}

// stop sends SIGINT to the server and checks it ends well.
func (s *served) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		s.t.Fatal(err)
	}
	if code := exitCode(s.cmd.Wait()); code != 0 {
		s.t.Errorf("serve exit %d\n%s", code, s.stderr)
	}
}

func TestServeFollowsARunAndQueuesBehindIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{Text: "the terminal's answer, slowly", Pieces: 10, ChunkDelay: 250 * time.Millisecond},
		llmtest.Text("the browser's answer"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := e.startServe(ctx)
	if !strings.Contains(srv.stdout.String(), srv.info.URL+"/login?token="+srv.info.Token) {
		t.Errorf("serve printed no login URL: %q", srv.stdout.String())
	}

	run, runEvents, runErr := e.startJSON(ctx, "from the terminal")
	id := waitFor(t, runEvents, protocol.EventTurnStarted).SessionID
	stream := srv.events(ctx, id)
	evs := collect(t, stream, protocol.EventTurnStarted, 1)

	var acc protocol.MessageAccepted
	if st := srv.api("POST", "/api/sessions/"+id+"/messages", protocol.SendMessage{Text: "from the browser"}, &acc); st != 202 || !acc.Queued {
		t.Fatalf("message during the run: %d %+v, want 202 queued", st, acc)
	}
	evs = append(evs, collect(t, stream, protocol.EventTurnCompleted, 2)...)
	for range runEvents {
	}
	if code := exitCode(run.Wait()); code != 0 {
		t.Fatalf("run exit %d\n%s", code, runErr)
	}

	// The stream had the run's turn, the queued message, then its turn.
	var turns [][2]string
	var user string
	for _, ev := range evs {
		if ev.Type == protocol.EventMessageCompleted && ev.Message != nil {
			if ev.Message.Role == protocol.RoleUser {
				user = ev.Message.Content
			} else {
				turns = append(turns, [2]string{user, ev.Message.Content})
			}
		}
	}
	want := [][2]string{{"from the terminal", "the terminal's answer, slowly"}, {"from the browser", "the browser's answer"}}
	if len(turns) != 2 || turns[0] != want[0] || turns[1] != want[1] {
		t.Errorf("turns seen by the server's stream %q, want %q", turns, want)
	}
	// Every stored event, once, in order.
	d := e.show(id)
	stored := storedOnly(evs)
	for i, ev := range stored {
		if ev.Sequence != int64(i+1) {
			t.Fatalf("stream sequences %v are not 1..n", eventTypes(stored))
		}
	}
	if d.Session.Status != protocol.StatusIdle {
		t.Errorf("status %s", d.Session.Status)
	}

	srv.stop()
	rest := collect(t, stream, protocol.EventStreamClosing, 1)
	if rest[len(rest)-1].Type != protocol.EventStreamClosing {
		t.Errorf("stream end %v", eventTypes(rest))
	}
	if _, err := os.Stat(filepath.Join(e.home, "server.json")); !os.IsNotExist(err) {
		t.Errorf("server.json left after the server stopped (%v)", err)
	}
}

func TestServeAnswersAnApprovalPausedByRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("edit_file", `{"path":"main.go","old_string":"v1","new_string":"v2"}`),
		llmtest.Text("edited from the panel"),
	)
	e.writeWS("main.go", "package main // v1\n")
	r := e.run("", "run", "--json", "--on-ask", "pause", "bump the version")
	if r.code != 4 {
		t.Fatalf("run exit %d, want 4 (paused)\n%s", r.code, r.stderr)
	}
	id := sessionOf(t, r.events(t))
	rid := e.pendingRequest(id)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := e.startServe(ctx)
	stream := srv.events(ctx, id)
	collect(t, stream, protocol.EventStreamReady, 1)
	var out protocol.ApprovalAccepted
	if st := srv.api("POST", "/api/sessions/"+id+"/approvals/"+rid, protocol.ApprovalAnswer{Decision: "allow"}, &out); st != 202 {
		t.Fatalf("approval: %d %+v", st, out)
	}
	evs := collect(t, stream, protocol.EventTurnCompleted, 1)
	src, _ := os.ReadFile(filepath.Join(e.ws, "main.go"))
	if !strings.Contains(string(src), "v2") {
		t.Errorf("main.go after the approval: %q", src)
	}
	var answer string
	for _, ev := range evs {
		if ev.Type == protocol.EventMessageCompleted && ev.Message != nil && ev.Message.Role == protocol.RoleAssistant {
			answer = ev.Message.Content
		}
	}
	if answer != "edited from the panel" {
		t.Errorf("answer %q", answer)
	}
	srv.stop()
}

func TestServeRefusesANonLoopbackAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "serve", "--addr", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "--allow-remote") {
		t.Errorf("serve on 0.0.0.0: exit %d, %q", r.code, r.stderr)
	}
	r = e.run("", "serve", "--sandbox", "everything")
	if r.code != 2 || !strings.Contains(r.stderr, "--sandbox") {
		t.Errorf("serve --sandbox everything: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "server.json")); !os.IsNotExist(err) {
		t.Error("a refused serve wrote server.json")
	}
	// With --allow-remote it serves, warns, and still wants the token.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, "serve", "--addr", "0.0.0.0:0", "--allow-remote", "--sandbox", "read-only")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, stdout: &out, stderr: &errb}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(e.home, "server.json"))
		if err == nil && json.Unmarshal(data, &s.info) == nil && s.info.PID == cmd.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no server.json: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(errb.String(), "Warning") {
		t.Errorf("no warning for a remote address: %q", errb.String())
	}
	resp, err := http.Get(s.info.URL + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("remote server without token: %d", resp.StatusCode)
	}
	s.stop()
}
