package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// BenchmarkServeFanout measures a real `mx-claw serve` with 100 event
// stream clients on one session while a turn streams 1,000 deltas: the
// delivery latency of every event to every client (p50, p99), the
// server's resident memory, and the turn's time with the clients against
// the same turn without them, in one run.
//
//	go test ./cmd/mx-claw -run '^$' -bench ServeFanout -benchtime 1x
func BenchmarkServeFanout(b *testing.B) {
	const deltas = 1000
	text := strings.Repeat("word ", deltas*4)
	// As fast as the fake model can stream (about 100,000 deltas a
	// second), and at 500 a second (still faster than real models).
	b.Run("burst", func(b *testing.B) { benchFanout(b, 100, llmtest.Reply{Text: text, Pieces: deltas}) })
	b.Run("paced-2ms", func(b *testing.B) {
		benchFanout(b, 100, llmtest.Reply{Text: text, Pieces: deltas, ChunkDelay: 2 * time.Millisecond})
	})
}

func benchFanout(b *testing.B, clients int, reply llmtest.Reply) {
	deltas := reply.Pieces
	e := newBenchEnv(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := startServe(b, e, ctx)
	defer srv.stop()

	var sess protocol.Session
	if st := srv.api("POST", "/api/sessions", protocol.CreateSession{Workspace: e.ws}, &sess); st != 201 {
		b.Fatalf("create session: %d", st)
	}
	var lat []time.Duration
	var without, with []time.Duration
	var minDeltas = deltas
	b.ResetTimer()
	for range b.N {
		// The turn alone.
		e.srv.Enqueue(reply, reply)
		without = append(without, srv.turn(b, ctx, sess.ID, "alone"))

		// The same turn watched by 100 streams.
		from := srv.lastSequence(b, ctx, sess.ID)
		var wg sync.WaitGroup
		ready := make(chan struct{}, clients)
		results := make([][]time.Duration, clients)
		counts := make([]int, clients)
		cctx, ccancel := context.WithCancel(ctx)
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], counts[i] = srv.watch(b, cctx, sess.ID, from, ready)
			}()
		}
		for range clients {
			<-ready
		}
		with = append(with, srv.turn(b, ctx, sess.ID, "watched"))
		wg.Wait()
		ccancel()
		for i := range clients {
			lat = append(lat, results[i]...)
			minDeltas = min(minDeltas, counts[i])
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	rss, hwm := procMemory(srv.cmd.Process.Pid)
	alone, watched := median(without), median(with)
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(rss)/1024, "rss-MB")
	b.ReportMetric(float64(hwm)/1024, "peak-rss-MB")
	b.ReportMetric(float64(alone)/1e6, "turn-alone-ms")
	b.ReportMetric(float64(watched)/1e6, "turn-watched-ms")
	b.ReportMetric(float64(watched)/float64(alone), "turn-ratio")
	b.ReportMetric(float64(minDeltas), "min-deltas-per-client")
	b.Logf("%d clients, %d events each: latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; server RSS %d MB (peak %d MB); turn %v alone, %v watched (x%.2f); every client got at least %d of %d deltas",
		clients, len(lat)/clients/b.N, pct(0.5), pct(0.99), pct(1), rss/1024, hwm/1024, alone, watched, float64(watched)/float64(alone), minDeltas, deltas)
}

// newBenchEnv is newEnv for a benchmark.
func newBenchEnv(b *testing.B) *env {
	b.Helper()
	home, ws := b.TempDir(), b.TempDir()
	srv := llmtest.NewTestServer(b)
	srv.RecordBodies(false)
	e := &env{home: home, ws: ws, srv: srv}
	cfg := fmt.Sprintf(`{"version":1,"activeProvider":"fake","providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model"],"apiKey":"","requiresApiKey":false,"configured":true}}}`, srv.URL())
	if err := os.WriteFile(home+"/config.json", []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return e
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// turn posts a message and returns the turn's time, from its turn.started
// to its turn.completed as the server stamped them.
func (s *served) turn(b *testing.B, ctx context.Context, id, text string) time.Duration {
	b.Helper()
	from := s.lastSequence(b, ctx, id)
	var acc protocol.MessageAccepted
	if st := s.api("POST", "/api/sessions/"+id+"/messages", protocol.SendMessage{Text: text}, &acc); st != 202 || acc.TurnID == "" {
		b.Fatalf("message: %d %+v", st, acc)
	}
	var start, end time.Time
	for end.IsZero() {
		for _, e := range s.storedAfter(b, ctx, id, from) {
			switch {
			case e.Type == protocol.EventTurnStarted && e.TurnID == acc.TurnID:
				start = e.Timestamp
			case e.Type == protocol.EventTurnCompleted && e.TurnID == acc.TurnID:
				end = e.Timestamp
			case e.Type == protocol.EventTurnFailed:
				b.Fatalf("turn failed: %s", e.Error)
			}
		}
		if end.IsZero() {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return end.Sub(start)
}

// storedAfter reads the session's stored events after a sequence through
// the event stream's replay.
func (s *served) storedAfter(b *testing.B, ctx context.Context, id string, after int64) []protocol.Event {
	b.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.info.URL+"/api/sessions/"+id+"/events?after="+strconv.FormatInt(after, 10), nil)
	req.Header.Set("Authorization", "Bearer "+s.info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(bufio.NewReader(resp.Body))
	var out []protocol.Event
	for {
		ev, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		var e protocol.Event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			b.Fatal(err)
		}
		if e.Type == protocol.EventStreamReady {
			return out
		}
		out = append(out, e)
	}
}

// lastSequence returns the sequence of the session's last stored event.
func (s *served) lastSequence(b *testing.B, ctx context.Context, id string) int64 {
	evs := s.storedAfter(b, ctx, id, 0)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Sequence
}

// watch follows the session from a sequence until turn.completed and
// returns each event's delivery latency (arrival minus the server's
// timestamp) and the number of deltas it got. It signals ready once it
// follows live.
func (s *served) watch(b *testing.B, ctx context.Context, id string, from int64, ready chan<- struct{}) ([]time.Duration, int) {
	req, _ := http.NewRequestWithContext(ctx, "GET", s.info.URL+"/api/sessions/"+id+"/events?after="+strconv.FormatInt(from, 10), nil)
	req.Header.Set("Authorization", "Bearer "+s.info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		ready <- struct{}{}
		return nil, 0
	}
	defer resp.Body.Close()
	r := sse.NewReader(bufio.NewReader(resp.Body))
	var lat []time.Duration
	n := 0
	for {
		ev, err := r.NextRaw()
		if err != nil {
			b.Error(err)
			return lat, n
		}
		now := time.Now()
		switch typ := protocol.EventType(ev.Event); typ {
		case protocol.EventStreamReady:
			ready <- struct{}{}
			continue
		case protocol.EventStreamHeartbeat:
			continue
		case protocol.EventMessageDelta:
			n++
		}
		// Only the timestamp is read: the clients share the machine with
		// the server, and a full decode of every event would measure them.
		ts, ok := timestampOf(ev.Data)
		if !ok {
			b.Errorf("no timestamp in %s", ev.Data)
			return lat, n
		}
		lat = append(lat, now.Sub(ts))
		if protocol.EventType(ev.Event) == protocol.EventTurnCompleted {
			return lat, n
		}
	}
}

// timestampOf finds an event's "timestamp" in its JSON.
func timestampOf(data []byte) (time.Time, bool) {
	const key = `"timestamp":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}, false
	}
	rest := data[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	return ts, err == nil
}

// procMemory returns a process's resident and peak resident memory, in
// KiB, from /proc (0 where there is none).
func procMemory(pid int) (rss, hwm int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm
}
