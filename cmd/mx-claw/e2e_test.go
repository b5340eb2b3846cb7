package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/cli"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// binPath is the mx-claw binary the tests run: this test binary, linked
// (or copied) as "mx-claw" into a temporary directory.
var binPath string

// TestMain runs the tests, or, when this binary was started as "mx-claw",
// the command itself (as main.go does): the tests drive the very code
// they were built with, and `go test` builds it once instead of a second
// time with `go build` (on a fresh checkout that second build compiled
// every package again, about a minute on the project's machine). The
// sandbox helper, MCP servers and hooks that mx-claw starts from its own
// executable find "mx-claw" too.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "mx-claw" {
		os.Exit(runMXClaw())
	}
	dir, err := os.MkdirTemp("", "mx-claw-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "mx-claw")
	if err := linkSelf(binPath); err != nil {
		fmt.Fprintf(os.Stderr, "make the mx-claw binary: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgCluster.Main(m) // runs the tests, then stops the PostgreSQL cluster if one was started
	os.RemoveAll(dir)
	os.Exit(code)
}

// runMXClaw is main.go's main.
func runMXClaw() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return cli.Main(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// linkSelf makes path this executable: a hard link, or a copy where
// links cannot be made (another file system).
func linkSelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if os.Link(self, path) == nil {
		return nil
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// env is one end-to-end setting: a home, a workspace and a fake model.
type env struct {
	t    *testing.T
	home string
	ws   string
	srv  *llmtest.Server
}

func newEnv(t *testing.T, replies ...llmtest.Reply) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), ws: t.TempDir(), srv: llmtest.NewTestServer(t, replies...)}
	ws, err := filepath.EvalSymlinks(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	// Skill proposals are off unless a test turns them on: after a turn
	// with several tool calls they add a model request, which would take
	// a reply scripted for the next turn.
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","skills":{"proposals":false},"providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model","other-model"],"apiKey":"","requiresApiKey":false,"configured":true}}}`, e.srv.URL())
	e.writeHome("config.json", cfg)
	return e
}

func (e *env) writeHome(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.home, name), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) writeWS(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = e.ws
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"MX_CLAW_HOME=" + e.home,
		"LANG=C.UTF-8",
	}
	return cmd
}

// result is what a finished mx-claw process left.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) events(t *testing.T) []protocol.Event {
	t.Helper()
	var evs []protocol.Event
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev protocol.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not an event: %v\n%s", err, sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// run runs mx-claw to completion with stdin, failing the test after a minute.
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run mx-claw %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// show returns the stored session as `sessions show --json` prints it.
func (e *env) show(id string) sessionDump {
	e.t.Helper()
	r := e.run("", "sessions", "show", id, "--json")
	if r.code != 0 {
		e.t.Fatalf("sessions show %s: exit %d: %s", id, r.code, r.stderr)
	}
	var d sessionDump
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("sessions show --json: %v\n%s", err, r.stdout)
	}
	return d
}

type sessionDump struct {
	Session  protocol.Session   `json:"session"`
	Messages []protocol.Message `json:"messages"`
}

func sessionOf(t *testing.T, evs []protocol.Event) string {
	t.Helper()
	for _, ev := range evs {
		if ev.SessionID != "" {
			return ev.SessionID
		}
	}
	t.Fatal("no event names a session")
	return ""
}

func types(evs []protocol.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		if ev.Type == protocol.EventToolStarted || ev.Type == protocol.EventToolCompleted {
			out = append(out, string(ev.Type)+":"+ev.ToolCallID)
		}
	}
	return out
}

func toolResults(req llmtest.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Chat.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func TestVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mx-claw ") {
		t.Fatalf("version: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// startJSON starts mx-claw run --json and returns a channel of its events.
func (e *env) startJSON(ctx context.Context, args ...string) (*exec.Cmd, <-chan protocol.Event, *bytes.Buffer) {
	e.t.Helper()
	cmd := e.command(ctx, append([]string{"run", "--json"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	ch := make(chan protocol.Event, 64)
	go func() {
		defer close(ch)
		dec := json.NewDecoder(stdout)
		for {
			var ev protocol.Event
			if err := dec.Decode(&ev); err != nil {
				io.Copy(io.Discard, stdout)
				return
			}
			ch <- ev
		}
	}()
	return cmd, ch, &errb
}

// waitFor reads events until one of type typ arrives.
func waitFor(t *testing.T, ch <-chan protocol.Event, typ protocol.EventType) protocol.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %s", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event in 30 s", typ)
		}
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// pendingRequest returns the id of the session's only pending approval.
func (e *env) pendingRequest(id string) string {
	e.t.Helper()
	r := e.run("", "sessions", "show", id, "--json")
	var d struct {
		Session  protocol.Session    `json:"session"`
		Approval []protocol.Approval `json:"pendingApprovals"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		e.t.Fatalf("sessions show: %v\n%s", err, r.stdout)
	}
	if d.Session.Status != protocol.StatusWaitingForApproval || len(d.Approval) != 1 {
		e.t.Fatalf("session %s: status %s, %d pending approvals", id, d.Session.Status, len(d.Approval))
	}
	return d.Approval[0].ID
}
