package openai

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// spareDialer dials the client's connections and, when a server has said
// it will close the current one ("Connection: close"), opens the next one
// ahead of time so that the next agent step does not wait for it. The
// agent's work between two requests (storing the answer, running the
// tool) hides the dial.
//
// A server that keeps connections alive never gets a spare: the pool's
// idle connection is reused instead.
type spareDialer struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	spare net.Conn
	addr  string    // what spare is connected to
	at    time.Time // when spare was dialed
	gen   int       // bumped by every prepare; a dial that is not the latest is dropped
	// dialing is closed when the latest prepare's dial, to dialingAddr,
	// has ended; a request for that address waits for it rather than
	// dialing a second connection.
	dialing     chan struct{}
	dialingAddr string
}

// spareMaxAge bounds how long a spare waits for its request; a server may
// drop a connection that sends nothing for long.
const spareMaxAge = 20 * time.Second

func newSpareDialer() *spareDialer {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &spareDialer{dial: d.DialContext}
}

// DialContext hands out the spare connection for addr when there is a
// live one, and dials otherwise.
func (s *spareDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	dialing, dialingAddr := s.dialing, s.dialingAddr
	s.mu.Unlock()
	if dialing != nil && dialingAddr == addr {
		select {
		case <-dialing:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c := s.take(network, addr); c != nil {
		return c, nil
	}
	return s.dial(ctx, network, addr)
}

// take returns the spare if it is for addr, young and still open; any
// other spare is closed.
func (s *spareDialer) take(network, addr string) net.Conn {
	if network != "tcp" {
		return nil
	}
	s.mu.Lock()
	c, sameAddr, young := s.spare, s.addr == addr, time.Since(s.at) < spareMaxAge
	s.spare = nil
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	if sameAddr && young && alive(c) {
		return c
	}
	c.Close()
	return nil
}

// prepare dials addr in the background and keeps the connection as the
// spare, replacing any older one.
func (s *spareDialer) prepare(addr string) {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	done := make(chan struct{})
	s.dialing, s.dialingAddr = done, addr
	s.mu.Unlock()
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := s.dial(ctx, "tcp", addr)
		if err != nil {
			return // the next request dials for itself and reports the error
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if gen != s.gen {
			c.Close()
			return
		}
		if s.spare != nil {
			s.spare.Close()
		}
		s.spare, s.addr, s.at = c, addr, time.Now()
	}()
}

// dialAddr is the address the transport dials for req: its proxy's, if
// it goes through one, else the URL's host with the scheme's default port.
func dialAddr(tr *http.Transport, req *http.Request) string {
	u := req.URL
	if tr.Proxy != nil {
		if p, err := tr.Proxy(req); err != nil {
			return ""
		} else if p != nil {
			u = p
		}
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return ""
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
