package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
)

func TestStreamReplaysThenFollowsLive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "streamed in pieces", Pieces: 5}, llmtest.Text("second"))
	s := f.newSession()
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "one"}, nil, http.StatusAccepted)
	f.waitIdle(s.ID)
	stored := f.storedEvents(s.ID)

	// From the start: every stored event, then ready.
	c := f.stream(s.ID, "", "")
	evs := c.until(protocol.EventStreamReady)
	if len(evs) != len(stored)+1 {
		t.Fatalf("replayed %v, want the %d stored events", typesOf(evs), len(stored))
	}
	for i, e := range stored {
		if evs[i].Sequence != e.Sequence || evs[i].Type != e.Type {
			t.Errorf("replay %d: %s %d, want %s %d", i, evs[i].Type, evs[i].Sequence, e.Type, e.Sequence)
		}
	}
	ready := evs[len(evs)-1]
	if ready.Sequence != stored[len(stored)-1].Sequence || ready.Session == nil || ready.Session.Status != protocol.StatusIdle {
		t.Errorf("stream.ready %+v", ready)
	}
	// Live: the next turn's events, deltas included.
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "two"}, nil, http.StatusAccepted)
	live := c.until(protocol.EventTurnCompleted)
	if !hasType(live, protocol.EventMessageDelta) || live[0].Sequence != ready.Sequence+1 {
		t.Errorf("live %v from %d", typesOf(live), live[0].Sequence)
	}

	// Resuming: ?after=N and Last-Event-ID (which wins).
	n := stored[3].Sequence
	for _, r := range []struct{ query, lastID string }{{"?after=" + strconv.FormatInt(n, 10), ""}, {"?after=1", strconv.FormatInt(n, 10)}} {
		c := f.stream(s.ID, r.query, r.lastID)
		evs := c.until(protocol.EventStreamReady)
		if evs[0].Sequence != n+1 {
			t.Errorf("%+v: resumed at %d, want %d", r, evs[0].Sequence, n+1)
		}
	}
}

func TestStreamFramesStoredWithIDDeltasWithout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "abcdefgh", Pieces: 4, ChunkDelay: 20 * time.Millisecond})
	s := f.newSession()
	conn, br := f.rawStream(s.ID, "")
	defer conn.Close()
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "go"}, nil, http.StatusAccepted)
	deltas, storedN := 0, 0
	for frame := range frames(t, br) {
		var id, typ string
		for _, line := range strings.Split(frame, "\n") {
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				typ = v
			}
		}
		switch {
		case typ == "message.delta":
			deltas++
			if id != "" {
				t.Errorf("a delta with id %s", id)
			}
		case strings.HasPrefix(typ, "stream."):
			if id != "" {
				t.Errorf("%s with id %s", typ, id)
			}
		case typ != "":
			storedN++
			if id == "" {
				t.Errorf("stored %s without an id", typ)
			}
		}
		if typ == "turn.completed" {
			break
		}
	}
	if deltas == 0 || storedN == 0 {
		t.Errorf("%d deltas, %d stored frames", deltas, storedN)
	}
}

// rawStream opens a session's event stream on a plain connection and
// returns it with a reader of the (de-chunked) body.
func (f *fixture) rawStream(id, lastID string) (net.Conn, *bufio.Reader) {
	f.t.Helper()
	var d net.Dialer
	if f.smallSockets {
		// A small receive buffer, set before the connection is made so
		// the window is negotiated for it.
		d.Control = func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10) })
		}
	}
	conn, err := d.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	req := fmt.Sprintf("GET /api/sessions/%s/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", id,
		strings.TrimPrefix(f.ts.URL, "http://"), f.srv.Token())
	if lastID != "" {
		req += "Last-Event-ID: " + lastID + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		f.t.Fatalf("stream: %d", resp.StatusCode)
	}
	return conn, bufio.NewReader(resp.Body)
}

// frames yields the raw frames of a stream (without the blank line).
func frames(t *testing.T, br *bufio.Reader) func(func(string) bool) {
	return func(yield func(string) bool) {
		var b strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\n" {
				if !yield(strings.TrimSuffix(b.String(), "\n")) {
					return
				}
				b.Reset()
				continue
			}
			b.WriteString(line)
		}
	}
}

// appendEvents stores n warning events in the session, as another
// process's turn would; every other one is also handed to the server's
// feed as a turn of this process does, so both paths are exercised.
func (f *fixture) appendEvents(id string, n int, pause func()) {
	for i := range n {
		e := &protocol.Event{Type: protocol.EventWarning, SessionID: id, Text: fmt.Sprintf("event %d", i), Timestamp: time.Now().UTC()}
		if err := f.app.Store.AppendEvent(context.Background(), e); err != nil {
			f.t.Error(err)
			return
		}
		if i%2 == 0 {
			f.srv.sink(*e)
			f.srv.sink(protocol.Event{Type: protocol.EventMessageDelta, SessionID: id, Text: "d"})
		}
		if pause != nil {
			pause()
		}
	}
}

func TestStreamReconnectsWithoutGapsOrDuplicates(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	f := newFixture(t, func(o *testOptions) { o.PollInterval = 5 * time.Millisecond })
	s := f.newSession()
	const n = 200
	total := int64(n + 1) // session.created, then n events
	pauses := make([]time.Duration, n)
	for i := range pauses {
		pauses[i] = time.Duration(rng.IntN(1500)) * time.Microsecond
	}
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		i := 0
		f.appendEvents(s.ID, n, func() { time.Sleep(pauses[i]); i++ })
	}()
	defer func() { <-produced }()

	seen := map[int64]int{}
	var order []int64
	last := ""
	connections := 0
	for int64(len(order)) < total {
		connections++
		if connections > 100 {
			t.Fatalf("still missing events after 100 connections: have %d of %d", len(order), total)
		}
		c := f.stream(s.ID, "", last)
		stop := 1 + rng.IntN(30)
		got := 0
		for got < stop && int64(len(order)) < total {
			e, ok := c.next(20 * time.Second)
			if !ok {
				t.Fatal("stream ended")
			}
			if !stored(e) {
				continue
			}
			seen[e.Sequence]++
			order = append(order, e.Sequence)
			last = strconv.FormatInt(e.Sequence, 10)
			got++
		}
		c.close() // disconnect, whatever is in flight
	}
	for i, seq := range order {
		if seq != int64(i+1) {
			t.Fatalf("event %d of the union has sequence %d: gap or duplicate (order %v)", i, seq, order)
		}
	}
	for seq, k := range seen {
		if k != 1 {
			t.Errorf("sequence %d seen %d times", seq, k)
		}
	}
	storedEvs := f.storedEvents(s.ID)
	if int64(len(storedEvs)) != total || int64(len(order)) != total {
		t.Errorf("stored %d, received %d, want %d", len(storedEvs), len(order), total)
	}
	t.Logf("%d events over %d connections", len(order), connections)
}

func TestStalledClientDoesNotSlowTheTurn(t *testing.T) {
	t.Parallel()
	// A turn whose answer streams 2,000 deltas of 1 KiB, to a client whose
	// socket buffers hold a few KiB: it stalls at once.
	big := strings.Repeat("0123456789abcdef", 2000*1024/16)
	reply := llmtest.Reply{Text: big, Pieces: 2000}
	f := newFixture(t, func(o *testOptions) {
		o.Buffer = 64
		o.WriteTimeout = time.Minute
		o.smallSockets = true
	}, reply, reply)
	turn := func(id string) time.Duration {
		start := time.Now()
		err := f.app.Core.Run(context.Background(), agent.TurnRequest{SessionID: id, Input: "go"}, f.srv.sink)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// The same first turn in two sessions: one nobody watches, one with a
	// client that connects and then reads nothing.
	base := turn(f.newSession().ID)
	s := f.newSession()
	conn, br := f.rawStream(s.ID, "")
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for f.srv.feeds.get(s.ID) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the stream never subscribed")
		}
		time.Sleep(time.Millisecond)
	}
	stalled := turn(s.ID)
	t.Logf("turn without clients %v, with a stalled client %v (ratio %.2f)", base, stalled, float64(stalled)/float64(base))
	if stalled > 3*base+2*time.Second {
		t.Errorf("a stalled client slowed the turn from %v to %v", base, stalled)
	}
	// The client reads now: it gets every stored event, in order, once.
	want := f.storedEvents(s.ID)
	r := sse.NewReader(br)
	var got []int64
	for len(got) == 0 || got[len(got)-1] < want[len(want)-1].Sequence {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("after %d stored events: %v", len(got), err)
		}
		if e.Event == "message.delta" || strings.HasPrefix(e.Event, "stream.") {
			continue
		}
		seq, _ := strconv.ParseInt(e.ID, 10, 64)
		got = append(got, seq)
	}
	for i, seq := range got {
		if seq != want[i].Sequence {
			t.Fatalf("stored event %d: sequence %d, want %d", i, seq, want[i].Sequence)
		}
	}
	if f.srv.feeds.resyncs.Load() == 0 {
		t.Error("the stalled stream was never dropped and resynchronised")
	}
}

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *testOptions) { o.HeartbeatInterval = 30 * time.Millisecond })
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	for range 3 {
		e, _ := c.next(5 * time.Second)
		if e.Type != protocol.EventStreamHeartbeat || e.SessionID != s.ID || e.Sequence != 1 {
			t.Fatalf("heartbeat %+v", e)
		}
	}
}

func TestShutdownCancelsTurnsAndEndsStreams(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, llmtest.Reply{Text: "never ends", Hang: true})
	s := f.newSession()
	c := f.stream(s.ID, "", "")
	c.until(protocol.EventStreamReady)
	f.mustAPI("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "hang"}, nil, http.StatusAccepted)
	c.until(protocol.EventMessageDelta)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var rest []protocol.Event
	for {
		e, ok := c.next(10 * time.Second)
		if !ok {
			break
		}
		rest = append(rest, e)
	}
	if len(rest) == 0 || rest[len(rest)-1].Type != protocol.EventStreamClosing {
		t.Fatalf("after shutdown the stream sent %v, want ... stream.closing", typesOf(rest))
	}
	if !hasType(rest, protocol.EventTurnCancelled) {
		t.Errorf("the stream did not see the turn cancelled: %v", typesOf(rest))
	}
	if st, _ := f.app.Store.GetSession(context.Background(), s.ID); st.Status != protocol.StatusCancelled {
		t.Errorf("stored status %s, want cancelled", st.Status)
	}
	if _, err := f.app.Store.GetLease(context.Background(), s.ID); err == nil {
		t.Error("the lease is still held")
	}
	resp, data := f.request("POST", "/api/sessions/"+s.ID+"/messages", protocol.SendMessage{Text: "late"}, f.auth())
	checkError(t, "message after shutdown", resp, data, http.StatusServiceUnavailable, protocol.CodeShuttingDown)
}
