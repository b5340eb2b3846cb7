package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
	"github.com/mx-claw/mx-claw/internal/store/postgres"
)

// workerToken is the token the workers of a test share
// (MX_CLAW_SERVE_TOKEN), as workers behind one load balancer do.
const workerToken = "0123456789abcdef0123456789abcdef-workers"

// startWorkers starts n `mx-claw serve` processes, each with a home of its
// own, on the store url, with a lease TTL of ttl and one shared token;
// their turns ask srv.
func startWorkers(t *testing.T, n int, url string, ttl time.Duration, srv *llmtest.Server) ([]*served, string) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return startWorkersIn(t, n, url, ttl, srv, ws)
}

// startWorkersIn is startWorkers with the workspace ws.
func startWorkersIn(t *testing.T, n int, url string, ttl time.Duration, srv *llmtest.Server, ws string) ([]*served, string) {
	t.Helper()
	return startWorkersWith(t, n, url, ttl, srv, ws, "")
}

// startWorkersWith is startWorkersIn with more top-level keys of
// config.json in extra (`"server":{...}`).
func startWorkersWith(t *testing.T, n int, url string, ttl time.Duration, srv *llmtest.Server, ws, extra string) ([]*served, string) {
	t.Helper()
	if extra != "" {
		extra = "," + extra
	}
	out := make([]*served, n)
	for i := range n {
		e := &env{t: t, home: t.TempDir(), ws: ws, srv: srv}
		cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","store":%q,"leaseTTL":%q%s,"providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"apiKey":"","requiresApiKey":false,"configured":true}}}`,
			url, ttl.String(), extra, srv.URL())
		e.writeHome("config.json", cfg)
		cmd := e.command(context.Background(), "serve", "--addr", "127.0.0.1:0")
		cmd.Env = append(cmd.Env, "MX_CLAW_SERVE_TOKEN="+workerToken)
		s := newServed(t, cmd)
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Signal(syscall.SIGCONT)
				cmd.Process.Kill()
				cmd.Wait()
			}
		})
		s.waitInfo(e.home)
		out[i] = s
	}
	return out, ws
}

// call sends an authorized JSON request to a worker; an error means the
// worker could not be reached.
func call(base, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer "+workerToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, nil
}

// sessionState is GET /api/sessions/{id}.
type sessionState struct {
	Session  protocol.Session       `json:"session"`
	Messages []protocol.Message     `json:"messages"`
	Queued   []protocol.QueuedInput `json:"queued"`
}

// echo answers each request with "answer: " and the last user message, in
// pieces, slowly enough that a turn is in flight for a while.
func echo(delay time.Duration) llmtest.Responder {
	return func(req *llmtest.Request) llmtest.Reply {
		last := ""
		for _, m := range req.Chat.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		return llmtest.Reply{Text: "answer: " + last, Pieces: 6, ChunkDelay: delay}
	}
}

// follower follows one session's event stream on any live worker,
// reconnecting to another with Last-Event-ID when its worker dies, and
// records the sequences of the stored events it got.
type follower struct {
	t          *testing.T
	id         string
	urls       []string
	alive      []*atomic.Bool
	mu         sync.Mutex
	seqs       []int64
	reconnects int
	gaps       []string
}

func (f *follower) last() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seqs) == 0 {
		return 0
	}
	return f.seqs[len(f.seqs)-1]
}

// run follows until ctx ends.
func (f *follower) run(ctx context.Context, start int) {
	w := start
	for first := true; ctx.Err() == nil; first = false {
		for !f.alive[w].Load() {
			w = (w + 1) % len(f.urls)
		}
		if !first {
			f.mu.Lock()
			f.reconnects++
			f.mu.Unlock()
		}
		f.stream(ctx, f.urls[w])
		w = (w + 1) % len(f.urls)
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stream reads one connection's events; the first stored one after a
// reconnect must follow the last one seen.
func (f *follower) stream(ctx context.Context, base string) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/sessions/"+f.id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+workerToken)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(f.last(), 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return
	}
	r := sse.NewReader(bufio.NewReader(resp.Body))
	for {
		ev, err := r.Next()
		if err != nil {
			return
		}
		var e protocol.Event
		if json.Unmarshal([]byte(ev.Data), &e) != nil || e.Sequence == 0 || !e.Type.Stored() || strings.HasPrefix(string(e.Type), "stream.") {
			continue
		}
		f.mu.Lock()
		prev := int64(0)
		if len(f.seqs) > 0 {
			prev = f.seqs[len(f.seqs)-1]
		}
		if e.Sequence != prev+1 {
			f.gaps = append(f.gaps, fmt.Sprintf("%d after %d (from %s)", e.Sequence, prev, base))
		}
		f.seqs = append(f.seqs, e.Sequence)
		f.mu.Unlock()
	}
}

// TestServeWorkersShareSessions: three `serve` workers on one PostgreSQL
// database; 30 sessions driven through them at once; one worker killed
// with SIGKILL mid-turn, just after messages were queued behind its turns.
// Its sessions are taken over by the others: their interrupted turns are
// recorded as failed and resumed (the fake model answers them), the
// queued messages are sent after them, their next messages are answered
// elsewhere, no acknowledged message is lost or sent twice, and event
// streams that reconnect to another worker with Last-Event-ID see every
// stored event once, in order, with no gap.
func TestServeWorkersShareSessions(t *testing.T) {
	t.Parallel()
	url := pgCluster.NewDB(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.SetResponder(echo(120 * time.Millisecond))
	// Long enough that a loaded machine does not starve a live worker's
	// heartbeat; a dead worker's sessions are taken over sooner (its
	// process is seen gone).
	const ttl = 4 * time.Second
	workers, ws := startWorkers(t, 3, url, ttl, srv)
	urls := make([]string, len(workers))
	alive := make([]*atomic.Bool, len(workers))
	for i, w := range workers {
		urls[i], alive[i] = w.info.URL, &atomic.Bool{}
		alive[i].Store(true)
	}
	live := func(i int) string {
		for !alive[i%len(urls)].Load() {
			i++
		}
		return urls[i%len(urls)]
	}

	const sessions, rounds = 30, 3
	ids := make([]string, sessions)
	for i := range ids {
		var sess protocol.Session
		if code, err := call(urls[i%3], "POST", "/api/sessions", map[string]string{"workspace": ws}, &sess); err != nil || code != 201 {
			t.Fatalf("create session: %d %v", code, err)
		}
		ids[i] = sess.ID
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followers := make([]*follower, sessions)
	var fwg sync.WaitGroup
	for i, id := range ids {
		followers[i] = &follower{t: t, id: id, urls: urls, alive: alive}
		fwg.Go(func() { followers[i].run(ctx, i%3) })
	}

	// Each session's driver posts its messages one after another, each
	// once the previous turn ended, to a live worker.
	var posted [rounds]atomic.Int32
	// When each driver first posted its last message, and when it was
	// accepted: the message queued before the kill goes before it or
	// after it (or either, when the two posts overlapped).
	lastPosted, lastAccepted := make([]atomic.Int64, sessions), make([]atomic.Int64, sessions)
	// attempts[i] logs each post of session i's driver, for a failure.
	attempts := make([][]string, sessions)
	var amu sync.Mutex
	note := func(i int, format string, args ...any) {
		amu.Lock()
		attempts[i] = append(attempts[i], fmt.Sprintf("%s ", time.Now().Format("15:04:05.000"))+fmt.Sprintf(format, args...))
		amu.Unlock()
	}
	var dwg sync.WaitGroup
	driverErr := make(chan error, sessions)
	for i, id := range ids {
		dwg.Go(func() {
			for k := range rounds {
				text := fmt.Sprintf("session %d message %d", i, k+1)
				var code int
				var err error
				if k == rounds-1 {
					lastPosted[i].Store(time.Now().UnixNano())
				}
				for try := 0; ; try++ {
					base := live(i)
					code, err = call(base, "POST", "/api/sessions/"+id+"/messages", map[string]string{"text": text}, nil)
					note(i, "post %q to %s: %d %v", text, base, code, err)
					if err == nil && code != http.StatusConflict || try > 50 {
						break
					}
					// The worker died under the request: it may have
					// stored or queued the message before. Post it again
					// only if it did not (a client that cannot tell would
					// send it twice, and the check below would say so).
					time.Sleep(100 * time.Millisecond)
					if stored(live(i), id, text) {
						code, err = 202, nil
						break
					}
				}
				if err != nil || code != 202 {
					driverErr <- fmt.Errorf("post %q: %d %v", text, code, err)
					return
				}
				if k == rounds-1 {
					lastAccepted[i].Store(time.Now().UnixNano())
				}
				posted[k].Add(1)
				if err := waitTurn(live, i, id, text); err != nil {
					driverErr <- err
					return
				}
			}
		})
	}

	// Kill worker 0 while its sessions are mid-turn in round 2.
	deadline := time.Now().Add(60 * time.Second)
	for posted[1].Load() < sessions && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	running := 0
	for time.Now().Before(deadline) {
		running = 0
		for i := 0; i < sessions; i += 3 {
			var st sessionState
			if _, err := call(urls[1], "GET", "/api/sessions/"+ids[i], nil, &st); err == nil && st.Session.Status == protocol.StatusRunning {
				running++
			}
		}
		if running >= 5 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Queue a message behind each of worker 0's turns, then kill it: every
	// acknowledged one must be sent once, by another worker.
	extra := map[int]string{}
	extraPosted, extraAccepted := map[int]int64{}, map[int]int64{}
	for i := 0; i < sessions; i += 3 {
		text := fmt.Sprintf("session %d queued before the kill", i)
		extraPosted[i] = time.Now().UnixNano()
		code, err := call(urls[0], "POST", "/api/sessions/"+ids[i]+"/messages", map[string]string{"text": text}, nil)
		extraAccepted[i] = time.Now().UnixNano()
		note(i, "post %q to %s: %d %v", text, urls[0], code, err)
		if err == nil && code == 202 {
			extra[i] = text
		}
	}
	alive[0].Store(false)
	if err := workers[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	workers[0].cmd.Wait()
	t.Logf("killed worker 0 (%s) with %d of its sessions mid-turn at %s", urls[0], running, killedAt.Format("15:04:05.000"))

	dwg.Wait()
	close(driverErr)
	for err := range driverErr {
		t.Error(err)
	}
	if t.Failed() {
		for i, w := range workers {
			t.Logf("worker %d said:\n%s", i, output(w.stderr))
		}
		logLeasesAndQueues(t, url, ids)
		return
	}

	// Check everything through the store itself.
	st, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	interrupted, resumedTurns, tookOver := 0, 0, time.Duration(0)
	for i, id := range ids {
		bad := false
		fail := func(format string, args ...any) {
			t.Helper()
			bad = true
			t.Errorf(format, args...)
		}
		evs, err := st.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		started, ended, resumed, failed := 0, 0, 0, 0
		for j, e := range evs {
			if e.Sequence != int64(j+1) {
				t.Fatalf("session %d: event %d has sequence %d", i, j, e.Sequence)
			}
			switch e.Type {
			case protocol.EventTurnStarted:
				started++
			case protocol.EventTurnCompleted:
				ended++
			case protocol.EventWarning:
				if strings.HasPrefix(e.Text, "Turn resumed on worker") {
					resumed++
				}
			case protocol.EventTurnFailed:
				ended++
				if e.Error != agent.InterruptedError {
					fail("session %d: turn failed: %s", i, e.Error)
				}
				interrupted++
				failed++
				if i%3 != 0 {
					fail("session %d of a live worker was interrupted", i)
				}
				tookOver = max(tookOver, e.Timestamp.Sub(killedAt))
			}
		}
		if started != ended {
			fail("session %d: %d turns started, %d ended", i, started, ended)
		}
		msgs, _ := st.Messages(context.Background(), id, 0)
		// Every user message is answered, once; queued messages sent
		// together are one user message, their texts apart by blank lines.
		var sent []string
		answers := map[string]bool{}
		for j, m := range msgs {
			switch m.Role {
			case protocol.RoleUser:
				sent = append(sent, strings.Split(m.Content, "\n\n")...)
				answered := false
				for _, a := range msgs[j+1:] {
					if a.Role == protocol.RoleUser {
						break
					}
					answered = answered || a.Role == protocol.RoleAssistant && a.Content == "answer: "+m.Content
				}
				if !answered {
					fail("session %d: user message %q not answered", i, m.Content)
				}
			case protocol.RoleAssistant:
				if answers[m.Content] {
					fail("session %d: answer %q stored twice", i, m.Content)
				}
				answers[m.Content] = true
			}
		}
		var want []string
		for k := range rounds {
			want = append(want, fmt.Sprintf("session %d message %d", i, k+1))
		}
		var other []string // the order if the two posts overlapped
		if q, ok := extra[i]; ok {
			// Queued during round 2, it is sent after message 2, before or
			// with message 3; or after message 3 if the driver's post of
			// message 3 was accepted first.
			before, after := slices.Insert(slices.Clone(want), 2, q), append(slices.Clone(want), q)
			last := lastAccepted[i].Load()
			switch {
			case last != 0 && last < extraPosted[i]:
				want = after
			case last == 0 || extraAccepted[i] < lastPosted[i].Load():
				want = before
			default:
				want, other = before, after
			}
		}
		if !slices.Equal(sent, want) && !slices.Equal(sent, other) {
			fail("session %d: user messages %q, want %q", i, sent, want)
		}
		if resumed != failed {
			fail("session %d: %d interrupted turns, %d resumed", i, failed, resumed)
		}
		if resumed > 0 && i%3 != 0 {
			fail("session %d of a live worker was resumed", i)
		}
		resumedTurns += resumed
		sess, _ := st.GetSession(context.Background(), id)
		if sess.Status == protocol.StatusRunning {
			fail("session %d still running", i)
		}
		// The stream got every stored event once, in order.
		deadline := time.Now().Add(20 * time.Second)
		for followers[i].last() < int64(len(evs)) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		f := followers[i]
		f.mu.Lock()
		if len(f.gaps) > 0 || len(f.seqs) != len(evs) {
			fail("session %d: stream got %d of %d events, gaps %v", i, len(f.seqs), len(evs), f.gaps)
		}
		if i%3 == 0 && f.reconnects == 0 {
			fail("session %d: its stream never reconnected to another worker", i)
		}
		f.mu.Unlock()
		if bad {
			amu.Lock()
			t.Logf("session %d: its posts:\n%s", i, strings.Join(attempts[i], "\n"))
			amu.Unlock()
			for _, e := range evs {
				if e.Type != protocol.EventMessageDelta && !strings.HasPrefix(string(e.Type), "stream.") {
					t.Logf("session %d: event %d %s %s %s %q %q", i, e.Sequence, e.Timestamp.Format("15:04:05.000"), e.Type, e.TurnID, e.Text, e.Error)
				}
			}
		}
	}
	if t.Failed() {
		for i, w := range workers {
			t.Logf("worker %d said:\n%s", i, output(w.stderr))
		}
	}
	if interrupted < 5 {
		t.Errorf("%d turns interrupted by the kill, want at least 5", interrupted)
	}
	if resumedTurns != interrupted {
		t.Errorf("%d interrupted turns, %d resumed: every one must be", interrupted, resumedTurns)
	}
	t.Logf("%d interrupted turns taken over and resumed, the last %v after the kill (lease TTL %v); %d messages queued before the kill",
		interrupted, tookOver.Round(time.Millisecond), ttl, len(extra))
	cancel()
	fwg.Wait()
	for _, w := range workers[1:] {
		w.stop()
	}
}

// logLeasesAndQueues logs the lease and the queued inputs of each session
// that has either, to tell why a turn did not end.
func logLeasesAndQueues(t *testing.T, url string, ids []string) {
	st, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Log(err)
		return
	}
	defer st.Close()
	for i, id := range ids {
		l, lerr := st.GetLease(context.Background(), id)
		q, _ := st.QueuedInputs(context.Background(), id)
		if lerr == nil || len(q) > 0 {
			t.Logf("session %d: lease %+v (%v), queued %+v", i, l, lerr, q)
		}
	}
}

// stored reports whether the session has the user message text queued,
// or in its transcript (alone, or sent with other queued messages): the
// server accepted it (server's doc.go, "Turns").
func stored(base, id, text string) bool {
	var st sessionState
	if _, err := call(base, "GET", "/api/sessions/"+id, nil, &st); err != nil {
		return false
	}
	for _, q := range st.Queued {
		if q.Content == text {
			return true
		}
	}
	for _, m := range st.Messages {
		if m.Role == protocol.RoleUser && slices.Contains(strings.Split(m.Content, "\n\n"), text) {
			return true
		}
	}
	return false
}

// waitTurn waits until the turn of the session's message text was
// answered (on its worker, or resumed on another after its worker died).
// Messages queued together are sent as one, text among them.
func waitTurn(live func(int) string, i int, id, text string) error {
	deadline := time.Now().Add(60 * time.Second)
	var st sessionState
	for time.Now().Before(deadline) {
		st = sessionState{}
		if _, err := call(live(i), "GET", "/api/sessions/"+id, nil, &st); err == nil {
			for j, m := range st.Messages {
				if m.Role != protocol.RoleUser || !slices.Contains(strings.Split(m.Content, "\n\n"), text) {
					continue
				}
				for _, a := range st.Messages[j+1:] {
					if a.Role == protocol.RoleAssistant && a.Content == "answer: "+m.Content {
						return nil
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	var seen []string
	for _, m := range st.Messages {
		seen = append(seen, string(m.Role)+": "+m.Content)
	}
	return fmt.Errorf("session %d: the turn of %q did not end in 60 s; the session is %s (%s), its messages %q",
		i, text, st.Session.Status, st.Session.LastError, seen)
}

// TestServeFrozenWorkerIsFenced: a worker stopped with SIGSTOP mid-turn,
// past its lease's TTL, loses the session to another worker, which records
// the interrupted turn and runs the next one; when the first resumes
// (SIGCONT) with its answer complete, its next write is refused: nothing
// of its turn is stored after the takeover, and it says so.
//
// Two ways: "ttl", as it happens — A stays stopped past its lease TTL; on
// SIGCONT its heartbeat and its write race to find out, and either stops
// it. "write-first" makes the write win: A's heartbeat is slow (a lease
// TTL of a minute) and its lease is made to expire while it is stopped
// (its row's expiry set in the past), so on SIGCONT no heartbeat is due
// and the store's fencing alone refuses A's next write.
func TestServeFrozenWorkerIsFenced(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"ttl", "write-first"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testFrozenWorker(t, mode)
		})
	}
}

func testFrozenWorker(t *testing.T, mode string) {
	url := pgCluster.NewDB(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		last := ""
		for _, m := range req.Chat.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		if last == "first" {
			// The frozen worker's answer: its stream ends while it is
			// stopped, so it has the whole answer when it wakes up.
			return llmtest.Reply{Text: "written by the frozen worker", Pieces: 3, ChunkDelay: 600 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer from the other worker", Pieces: 4, ChunkDelay: 500 * time.Millisecond}
	})
	const ttl = 2 * time.Second
	aTTL := ttl
	if mode == "write-first" {
		aTTL = time.Minute
	}
	first, ws := startWorkers(t, 1, url, aTTL, srv)
	// B does not resume A's turn (TestServeWorkersShareSessions shows
	// that): here the frozen worker's answer must be nowhere.
	second, _ := startWorkersWith(t, 1, url, ttl, srv, ws, `"server":{"resumeInterrupted":false}`)
	a, b := first[0], second[0]
	var sess protocol.Session
	if code, err := call(a.info.URL, "POST", "/api/sessions", map[string]string{"workspace": ws}, &sess); err != nil || code != 201 {
		t.Fatalf("create session: %d %v", code, err)
	}
	posted := time.Now() // the lease is taken after this: it cannot expire before posted+ttl
	if code, err := call(a.info.URL, "POST", "/api/sessions/"+sess.ID+"/messages", map[string]string{"text": "first"}, nil); err != nil || code != 202 {
		t.Fatalf("post: %d %v", code, err)
	}
	// Stop A once its model request is under way.
	for deadline := time.Now().Add(30 * time.Second); len(srv.ChatRequests()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("worker A sent no model request")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if mode == "write-first" {
		expireLeases(t, url)
	}

	// B takes the session over once A's lease has expired.
	var st sessionState
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := call(b.info.URL, "GET", "/api/sessions/"+sess.ID, nil, &st); err == nil && st.Session.Status == protocol.StatusFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker B did not take the session over: %+v", st.Session)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tookOver := time.Since(stopped)
	if mode == "ttl" && time.Since(posted) < ttl {
		t.Errorf("taken over %v after the message was posted, before the lease TTL %v", time.Since(posted), ttl)
	}
	// B runs the next turn; A wakes up in the middle of it.
	if code, err := call(b.info.URL, "POST", "/api/sessions/"+sess.ID+"/messages", map[string]string{"text": "second"}, nil); err != nil || code != 202 {
		t.Fatalf("post to B: %d %v", code, err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := call(b.info.URL, "GET", "/api/sessions/"+sess.ID, nil, &st); err == nil && st.Session.Status == protocol.StatusIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B's turn did not end: %+v", st.Session)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Give A time to try its writes.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(output(a.stderr), "took the session over") {
			break
		}
	}
	if out := output(a.stderr); !strings.Contains(out, "took the session over") && !strings.Contains(out, "lease lost") {
		t.Errorf("worker A did not report losing the session:\n%s", out)
	}
	if out := output(a.stderr); mode == "write-first" && !strings.Contains(out, "the store refused its write") {
		t.Errorf("worker A's write was not refused by the store:\n%s", out)
	}

	store, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	msgs, _ := store.Messages(context.Background(), sess.ID, 0)
	var texts []string
	for _, m := range msgs {
		if m.Role != protocol.RoleSystem {
			texts = append(texts, string(m.Role)+": "+m.Content)
		}
	}
	want := []string{"user: first", "user: second", "assistant: answer from the other worker"}
	if !slices.Equal(texts, want) {
		t.Errorf("transcript %q, want %q (nothing of the frozen worker's answer)", texts, want)
	}
	evs, _ := store.Events(context.Background(), sess.ID, 0, 0)
	var types []string
	for j, e := range evs {
		if e.Sequence != int64(j+1) {
			t.Fatalf("event %d has sequence %d", j, e.Sequence)
		}
		types = append(types, string(e.Type))
	}
	if n := strings.Count(strings.Join(types, " "), "turn.completed"); n != 1 {
		t.Errorf("%d turns completed, want 1 (B's): %v", n, types)
	}
	how := "its heartbeat found the lease gone before it wrote"
	if strings.Contains(output(a.stderr), "the store refused its write") {
		how = "the store refused its write (fencing)"
	}
	t.Logf("taken over %v after SIGSTOP (lease TTL %v); on SIGCONT %s", tookOver.Round(time.Millisecond), ttl, how)
	b.stop()
	a.stop()
}

// expireLeases moves the expiry of every lease of the database into the
// past, as the TTL passing would.
func expireLeases(t *testing.T, url string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE leases SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
}
