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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// served is a running `mx-claw serve` process.
type served struct {
	t    testing.TB
	cmd  *exec.Cmd
	info protocol.ServerInfo
	// stdout and stderr are files the process writes directly, so reading
	// them while it runs races with nothing.
	stdout, stderr string
	// done is closed when the process has ended; err is then what
	// cmd.Wait returned.
	done chan struct{}
	err  error
}

// patience bounds a wait for a server that may never answer; on a loaded
// machine a server takes what it takes, so this is a guard against a
// hang, not a timing requirement.
const patience = 2 * time.Minute

// output returns what the process wrote to a file so far.
func output(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// newServed starts cmd with its output in files. The process is killed
// at the test's end if it still runs.
func newServed(tb testing.TB, cmd *exec.Cmd) *served {
	tb.Helper()
	dir := tb.TempDir()
	s := &served{t: tb, cmd: cmd, stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr"),
		done: make(chan struct{})}
	for _, f := range []struct {
		path string
		dst  *io.Writer
	}{{s.stdout, &cmd.Stdout}, {s.stderr, &cmd.Stderr}} {
		file, err := os.Create(f.path)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { file.Close() })
		*f.dst = file
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-s.done:
		default:
			cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// waitUntil checks cond until it holds, and fails the test if the process
// ends first (or nothing happens for the whole of patience), saying what.
func (s *served) waitUntil(what string, cond func() bool) {
	s.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	guard := time.NewTimer(patience)
	defer guard.Stop()
	for !cond() {
		select {
		case <-s.done:
			if cond() {
				return
			}
			s.t.Fatalf("mx-claw serve ended (%v) before %s\nstdout: %s\nstderr: %s", s.err, what, output(s.stdout), output(s.stderr))
		case <-guard.C:
			s.cmd.Process.Kill()
			s.t.Fatalf("mx-claw serve still had not %s after %s\nstdout: %s\nstderr: %s", what, patience, output(s.stdout), output(s.stderr))
		case <-tick.C:
		}
	}
}

// waitOutput waits until the process has written text to the file path
// (its stdout or stderr) and returns what it wrote.
func (s *served) waitOutput(path, text string) string {
	s.t.Helper()
	s.waitUntil("printed "+strconv.Quote(text), func() bool { return strings.Contains(output(path), text) })
	return output(path)
}

// waitInfo waits for the server's server.json.
func (s *served) waitInfo(home string) {
	s.t.Helper()
	path := filepath.Join(home, "server.json")
	s.waitUntil("written server.json", func() bool {
		data, err := os.ReadFile(path)
		return err == nil && json.Unmarshal(data, &s.info) == nil && s.info.PID == s.cmd.Process.Pid
	})
}

// startServe starts `mx-claw serve` on a free loopback port and waits for
// its server.json.
func (e *env) startServe(ctx context.Context, args ...string) *served {
	e.t.Helper()
	return startServe(e.t, e, ctx, args...)
}

func startServe(tb testing.TB, e *env, ctx context.Context, args ...string) *served {
	tb.Helper()
	cmd := e.command(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	s := newServed(tb, cmd)
	s.waitInfo(e.home)
	path := filepath.Join(e.home, "server.json")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		tb.Fatalf("server.json: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if !strings.HasPrefix(s.info.URL, "http://127.0.0.1:") || len(s.info.Token) != 64 {
		tb.Fatalf("server.json %+v", s.info)
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
	<-s.done
	if code := exitCode(s.err); code != 0 {
		s.t.Errorf("serve exit %d\n%s", code, output(s.stderr))
	}
}

func TestServeFollowsARunAndQueuesBehindIt(t *testing.T) {
	t.Parallel()
	// The run's answer waits until the browser's message is in: however
	// slow the machine, the message arrives while the run's turn runs.
	gate := make(chan struct{})
	e := newEnv(t,
		llmtest.Reply{Text: "the terminal's answer, slowly", Pieces: 10, Gate: gate},
		llmtest.Text("the browser's answer"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := e.startServe(ctx)
	srv.waitOutput(srv.stdout, srv.info.URL+"/login?token="+srv.info.Token)

	run, runEvents, runErr := e.startJSON(ctx, "from the terminal")
	id := waitFor(t, runEvents, protocol.EventTurnStarted).SessionID
	stream := srv.events(ctx, id)
	evs := collect(t, stream, protocol.EventTurnStarted, 1)

	var acc protocol.MessageAccepted
	if st := srv.api("POST", "/api/sessions/"+id+"/messages", protocol.SendMessage{Text: "from the browser"}, &acc); st != 202 || !acc.Queued {
		t.Fatalf("message during the run: %d %+v, want 202 queued", st, acc)
	}
	close(gate)
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
	s := newServed(t, cmd)
	s.waitInfo(e.home)
	if warned := s.waitOutput(s.stderr, "Warning"); !strings.Contains(warned, "beyond this machine") {
		t.Errorf("the warning for a remote address: %q", warned)
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

func TestServeOpenStartsTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	script := "#!/bin/sh\necho \"$1\" > " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, "serve", "--open")
	for i, v := range cmd.Env {
		if strings.HasPrefix(v, "PATH=") {
			cmd.Env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(v, "PATH=")
		}
	}
	s := newServed(t, cmd)
	var url []byte
	s.waitUntil("opened the browser", func() bool {
		url, _ = os.ReadFile(opened)
		return bytes.HasSuffix(url, []byte("\n"))
	})
	data, _ := os.ReadFile(filepath.Join(e.home, "server.json"))
	json.Unmarshal(data, &s.info)
	if got := strings.TrimSpace(string(url)); got != s.info.URL+"/login?token="+s.info.Token {
		t.Errorf("opened %q, want the login URL of %+v", got, s.info)
	}
	s.stop()
}
