package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Proxy is the small HTTP(S) proxy a sandboxed command with allowedHosts
// reaches the network through: CONNECT tunnels (HTTPS and anything else
// over TCP) and plain HTTP requests, to hosts that HostAllowed accepts
// only. It listens on a loopback TCP port and on a Unix socket (for a
// bwrap sandbox, whose network namespace has no way out but a bridge to
// that socket).
type Proxy struct {
	hosts []string
	tcp   net.Listener
	unix  net.Listener
	sock  string
	dial  func(network, addr string) (net.Conn, error)

	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// StartProxy starts a proxy for hosts, its Unix socket in dir.
func StartProxy(hosts []string, dir string) (*Proxy, error) {
	return startProxy(hosts, dir, func(n, a string) (net.Conn, error) { return net.DialTimeout(n, a, 10*time.Second) })
}

func startProxy(hosts []string, dir string, dial func(network, addr string) (net.Conn, error)) (*Proxy, error) {
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	sock := filepath.Join(dir, fmt.Sprintf("proxy-%d.sock", tcp.Addr().(*net.TCPAddr).Port))
	os.Remove(sock)
	ux, err := net.Listen("unix", sock)
	if err != nil {
		tcp.Close()
		return nil, fmt.Errorf("proxy: %w", err)
	}
	os.Chmod(sock, 0o666) // a sandbox may run as another user id
	p := &Proxy{hosts: append([]string(nil), hosts...), tcp: tcp, unix: ux, sock: sock,
		dial:  dial,
		conns: map[net.Conn]bool{}}
	for _, ln := range []net.Listener{tcp, ux} {
		p.wg.Add(1)
		go p.serve(ln)
	}
	return p, nil
}

// Port is the proxy's loopback TCP port.
func (p *Proxy) Port() int { return p.tcp.Addr().(*net.TCPAddr).Port }

// Socket is the proxy's Unix socket.
func (p *Proxy) Socket() string { return p.sock }

// Close stops the proxy and ends its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.tcp.Close()
	p.unix.Close()
	p.wg.Wait()
	os.Remove(p.sock)
	return nil
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on && p.closed {
		return false
	}
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) serve(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c, true) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.track(c, false)
			defer c.Close()
			p.handle(c)
		}()
	}
}

// refuse answers a request the proxy will not forward.
func refuse(w io.Writer, status int, msg string) {
	body := "mx-claw sandbox: " + msg + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

func (p *Proxy) handle(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		refuse(c, http.StatusBadRequest, "malformed proxy request")
		return
	}
	c.SetReadDeadline(time.Time{})
	authority := req.Host
	if req.Method != http.MethodConnect && req.URL != nil && req.URL.Host != "" {
		authority = req.URL.Host
	}
	host, port, err := net.SplitHostPort(authority)
	if err != nil {
		host, port = authority, "80"
	}
	if strings.ContainsAny(authority, "\x00 /\\@") || !HostAllowed(host, p.hosts) {
		refuse(c, http.StatusForbidden, fmt.Sprintf("host %q is not in sandbox.allowedHosts", host))
		return
	}
	up, err := p.dial("tcp", net.JoinHostPort(host, port))
	if err != nil {
		refuse(c, http.StatusBadGateway, fmt.Sprintf("cannot reach %s: %v", host, err))
		return
	}
	defer up.Close()
	if req.Method == http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			up.Write(b)
		}
	} else {
		// One plain HTTP request per connection, sent on in origin form.
		req.RequestURI = ""
		req.Header.Del("Proxy-Connection")
		req.Header.Del("Proxy-Authorization")
		req.Close = true
		if err := req.Write(up); err != nil {
			return
		}
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, br)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
