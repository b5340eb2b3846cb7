package openai

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// connLog records, per server connection, when it was accepted and the
// requests it carried, keyed by the client's address.
type connLog struct {
	mu       sync.Mutex
	accepted map[string]time.Time
	idle     map[string]net.Conn // accepted, no request yet
	order    []string            // the connection of each request, in order
}

// settled returns how many connections the server accepted, once the
// client's background dials have had time to land.
func (l *connLog) settled() int {
	time.Sleep(20 * time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted)
}

func newConnServer(t *testing.T, closeEach bool) (*httptest.Server, *connLog) {
	t.Helper()
	l := &connLog{accepted: map[string]time.Time{}, idle: map[string]net.Conn{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.order = append(l.order, r.RemoteAddr)
		delete(l.idle, r.RemoteAddr)
		l.mu.Unlock()
		if closeEach {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okStream)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			l.mu.Lock()
			l.accepted[c.RemoteAddr().String()] = time.Now()
			l.idle[c.RemoteAddr().String()] = c
			l.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, l
}

// TestSpareConnectionOpenedEarly: against a server that closes every
// connection, the connection of the next request is already open when the
// agent sends it, and every request uses a connection of its own.
func TestSpareConnectionOpenedEarly(t *testing.T) {
	t.Parallel()
	srv, l := newConnServer(t, true)
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	var sent []time.Time
	for range 4 {
		sent = append(sent, time.Now())
		var rs retries
		if _, err := c.Stream(context.Background(), testRequest(), rs.onDelta); err != nil {
			t.Fatal(err)
		}
		if len(rs.got) != 0 {
			t.Fatalf("retried: %v", rs.got)
		}
		time.Sleep(30 * time.Millisecond) // the agent's work between two steps
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for i, addr := range l.order {
		if seen[addr] {
			t.Fatalf("request %d reused connection %s that the server closed", i, addr)
		}
		seen[addr] = true
		if i > 0 && !l.accepted[addr].Before(sent[i]) {
			t.Errorf("request %d: its connection was accepted %v after the request started; want before",
				i, l.accepted[addr].Sub(sent[i]))
		}
	}
}

// TestNoSpareWithKeepAlive: a server that keeps connections open gets one
// connection for all requests and no spare.
func TestNoSpareWithKeepAlive(t *testing.T) {
	t.Parallel()
	srv, l := newConnServer(t, false)
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	for range 4 {
		if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.settled(); n != 1 {
		t.Fatalf("%d connections for 4 requests to a keep-alive server, want 1", n)
	}
}

// TestDeadSpareNotUsed: a spare that the server closed while it waited is
// dropped, and the request goes out on a new connection without a retry.
func TestDeadSpareNotUsed(t *testing.T) {
	t.Parallel()
	srv, l := newConnServer(t, true)
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	// Wait for the spare to arrive, then close it from the server's side.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.idle)
		for _, conn := range l.idle {
			conn.Close()
		}
		l.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no spare connection was opened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // let the FIN reach the client
	var rs retries
	if _, err := c.Stream(context.Background(), testRequest(), rs.onDelta); err != nil {
		t.Fatal(err)
	}
	if len(rs.got) != 0 {
		t.Fatalf("the dead spare cost a retry: %v", rs.got)
	}
}

func TestDialAddr(t *testing.T) {
	tr := &http.Transport{}
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:8080/v1/chat/completions", "127.0.0.1:8080"},
		{"http://localhost/v1", "localhost:80"},
		{"https://api.example.test/v1", "api.example.test:443"},
		{"http://[::1]:9/v1", "[::1]:9"},
	} {
		req, _ := http.NewRequest("POST", tc.url, nil)
		if got := dialAddr(tr, req); got != tc.want {
			t.Errorf("dialAddr(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
	proxied := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.test:3128") }}
	req, _ := http.NewRequest("POST", "https://api.example.test/v1", nil)
	if got := dialAddr(proxied, req); got != "proxy.test:3128" {
		t.Errorf("through a proxy: dialAddr = %q, want the proxy's address", got)
	}
}

// TestWarmConnectsBeforeFirstRequest: Warm opens the connection the first
// request then uses, and does nothing once a request went out.
func TestWarmConnectsBeforeFirstRequest(t *testing.T) {
	t.Parallel()
	srv, l := newConnServer(t, false)
	c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
	c.Warm()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.accepted)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Warm opened no connection")
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range 3 {
		if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
			t.Fatal(err)
		}
		c.Warm()
	}
	if n := l.settled(); n != 1 {
		t.Fatalf("%d connections; want the warmed one only", n)
	}
}

// TestRequestRightAfterWarmWaitsForItsDial: a request sent while Warm's
// dial is still under way takes that connection instead of dialing a
// second one.
func TestRequestRightAfterWarmWaitsForItsDial(t *testing.T) {
	t.Parallel()
	srv, l := newConnServer(t, false)
	for range 5 {
		c := New(Config{BaseURL: srv.URL, Sleep: noSleep})
		c.Warm()
		if _, err := c.Stream(context.Background(), testRequest(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.settled(); n != 5 {
		t.Fatalf("5 clients, each warmed and then used at once, opened %d connections; want 5", n)
	}
}
