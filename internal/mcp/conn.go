package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// conn is one configured server for one workspace: started when first
// needed, started again after it stopped. It is safe for concurrent use;
// calls share one connection (JSON-RPC multiplexes them).
type conn struct {
	m         *Manager
	srv       *Server
	workspace string
	// sem is held while the server starts, so one start serves everyone
	// waiting.
	sem chan struct{}

	mu      sync.Mutex
	live    *live // nil while the server is not running
	closed  bool
	started int // how many times the server was started
}

func newConn(m *Manager, srv *Server, workspace string) *conn {
	return &conn{m: m, srv: srv, workspace: workspace, sem: make(chan struct{}, 1)}
}

// LogPath is where a server's stderr goes: $MX_CLAW_HOME/logs/mcp-<name>.log.
func LogPath(home, server string) string {
	return filepath.Join(home, "logs", "mcp-"+fileSafe(server)+".log")
}

// fileSafe keeps letters, digits, '-', '_' and '.' of a name.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// live is a started server's connection.
type live struct {
	cs   *sdk.ClientSession
	proc *process     // a stdio server's child
	over *atomic.Bool // the connection's size cap tripped
	// stop ends what the transport keeps open (an SSE stream).
	stop context.CancelFunc
}

// lastingTransport connects its transport with a context of its own, not
// the one given to Connect: the SSE transport's event stream lives as
// long as that context, and Connect's is the handshake's, which ends
// when the server has started.
type lastingTransport struct {
	sdk.Transport
	ctx context.Context
}

func (t lastingTransport) Connect(context.Context) (sdk.Connection, error) {
	return t.Transport.Connect(t.ctx)
}

// session returns the live connection, starting the server if there is
// none. Starting is bounded by set.StartTimeout.
func (c *conn) session(ctx context.Context, set Settings) (*live, error) {
	if l, err := c.current(); l != nil || err != nil {
		return l, err
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	if l, err := c.current(); l != nil || err != nil {
		return l, err // started while we waited
	}
	return c.start(ctx, set)
}

// current returns the live connection, if any.
func (c *conn) current() (*live, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	return c.live, nil
}

// start starts the server and does the MCP handshake.
func (c *conn) start(ctx context.Context, set Settings) (*live, error) {
	ctx, cancel := context.WithTimeout(ctx, set.StartTimeout)
	defer cancel()
	environ := c.m.environ()
	var refuse func(string) string
	if c.srv.Source == SourceProject {
		refuse = c.m.refuse
	}
	var e *Expanded
	var err error
	if c.srv.Source == SourceClient {
		e = c.srv.literal()
	} else if e, err = c.srv.Expand(envLookup(environ), refuse); err != nil {
		return nil, &startError{server: c.srv.Name, err: err}
	}
	l := &live{over: new(atomic.Bool)}
	var t sdk.Transport
	switch c.srv.Transport {
	case TransportStdio:
		p, err := startProcess(e, c.workspace, childEnv(environ, e.Env), LogPath(c.m.opts.Home, c.srv.Name), set.MaxMessageBytes)
		if err != nil {
			return nil, &startError{server: c.srv.Name, err: err}
		}
		l.proc, l.over = p, &p.stdout.over
		t = &sdk.IOTransport{Reader: p.stdout, Writer: stdinWriter{p}, MaxLineLength: -1}
	default:
		hc := &http.Client{Transport: &httpTransport{base: c.m.httpBase(), headers: e.Headers, limit: set.MaxMessageBytes, over: l.over}}
		if c.srv.Transport == TransportSSE {
			t = &sdk.SSEClientTransport{Endpoint: e.URL, HTTPClient: hc, MaxEventSize: set.MaxMessageBytes + 64<<10}
		} else {
			t = &sdk.StreamableClientTransport{Endpoint: e.URL, HTTPClient: hc, DisableStandaloneSSE: true,
				MaxEventSize: set.MaxMessageBytes + 64<<10, MaxRetries: 1}
		}
	}
	connCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	client := sdk.NewClient(&sdk.Implementation{Name: "mx-claw", Version: c.m.opts.Version}, &sdk.ClientOptions{Logger: c.m.log})
	cs, err := client.Connect(ctx, lastingTransport{t, connCtx}, nil)
	if err != nil {
		stop()
		why := c.explain(err, ctx, l.proc, set)
		if l.proc != nil {
			l.proc.stop()
		}
		return nil, &startError{server: c.srv.Name, err: why, log: c.logHint()}
	}
	l.cs = cs
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.shutdown(l)
		return nil, ErrClosed
	}
	c.live = l
	c.started++
	c.mu.Unlock()
	go func() {
		// The connection ends when the server exits or breaks it: forget
		// it, so that the next call starts the server again.
		_ = cs.Wait()
		c.drop(l)
	}()
	return l, nil
}

// explain turns a failed handshake into a reason a person can act on.
func (c *conn) explain(err error, ctx context.Context, p *process, set Settings) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer to the MCP handshake within %s (mcp.startTimeout)", set.StartTimeout)
	}
	if p != nil {
		select {
		case <-p.done:
			return fmt.Errorf("the server exited during the handshake (%s)", p.exitStatus())
		case <-time.After(500 * time.Millisecond):
		}
	}
	return err
}

// logHint says where a stdio server's stderr went.
func (c *conn) logHint() string {
	if c.srv.Transport != TransportStdio {
		return ""
	}
	return LogPath(c.m.opts.Home, c.srv.Name)
}

// drop forgets the connection l if it is the current one, and stops its
// server.
func (c *conn) drop(l *live) {
	c.mu.Lock()
	if c.live == l {
		c.live = nil
	}
	c.mu.Unlock()
	c.shutdown(l)
}

// shutdown stops a connection's process and closes the connection.
// Stopping the process first ends the connection, so closing it waits
// for nothing the server could hold up. It may be called more than once.
func (c *conn) shutdown(l *live) {
	if l.proc != nil {
		l.proc.stop()
	}
	defer l.stop()
	done := make(chan struct{})
	go func() { _ = l.cs.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
	}
}

// close stops the server for good.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	l := c.live
	c.live = nil
	c.mu.Unlock()
	if l != nil {
		c.shutdown(l)
	}
}

// list returns the server's tools, starting it if needed.
func (c *conn) list(ctx context.Context, set Settings) ([]*sdk.Tool, error) {
	l, err := c.session(ctx, set)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, set.StartTimeout)
	defer cancel()
	var out []*sdk.Tool
	for t, err := range l.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, c.failed(ctx, l, err, "list its tools", set.StartTimeout, set)
		}
		out = append(out, t)
	}
	return out, nil
}

// call calls a tool of the server, starting it if needed. Its errors are
// written for the model (they become "Tool failed: …").
func (c *conn) call(ctx context.Context, set Settings, tool string, args json.RawMessage) (*sdk.CallToolResult, error) {
	l, err := c.session(ctx, set)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, set.CallTimeout)
	defer cancel()
	res, err := l.cs.CallTool(callCtx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.failed(callCtx, l, err, "call "+tool, set.CallTimeout, set)
	}
	return res, nil
}

// failed classifies the error of a request on cs: the server's own error,
// a timeout, a message over the cap (the server is stopped) or a broken
// connection (the server is stopped; the next use starts it again).
func (c *conn) failed(ctx context.Context, l *live, err error, what string, timeout time.Duration, set Settings) error {
	name := c.srv.Name
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		return fmt.Errorf("MCP server %q could not %s: %s", name, what, rpc.Message)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &callError{kind: ErrCallTimeout, msg: fmt.Sprintf("MCP server %q did not answer within %s when asked to %s; the request was cancelled", name, timeout, what)}
	}
	c.m.log.Debug("MCP connection failed", "server", name, "err", err)
	c.drop(l)
	if l.over.Load() {
		return &callError{kind: ErrResultTooLarge, msg: fmt.Sprintf("MCP server %q sent a message larger than %d bytes (mcp.maxMessageBytes) when asked to %s; the server was stopped and will start again on the next call", name, set.MaxMessageBytes, what)}
	}
	status := ""
	if l.proc != nil {
		// drop has stopped the process; if it had exited by itself, say how.
		if s := l.proc.exitStatus(); s != "" && !l.proc.stoppedByUs() {
			status = " (" + s + ")"
		}
	}
	return &callError{kind: ErrServerStopped, msg: fmt.Sprintf("MCP server %q stopped while asked to %s%s; it will start again on the next call", name, what, status)}
}

// running reports whether the server has a live connection, and the pid
// of a stdio server's child.
func (c *conn) running() (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil {
		return false, 0
	}
	if c.live.proc != nil {
		return true, c.live.proc.cmd.Process.Pid
	}
	return true, 0
}

// callError is an error of a call with its kind (ErrCallTimeout, …).
type callError struct {
	kind error
	msg  string
}

func (e *callError) Error() string        { return e.msg }
func (e *callError) Is(target error) bool { return target == e.kind }

// startError is a server that could not start.
type startError struct {
	server string
	err    error
	log    string
}

func (e *startError) Error() string {
	msg := fmt.Sprintf("MCP server %q did not start: %v", e.server, e.err)
	if e.log != "" {
		msg += " (its stderr is in " + e.log + ")"
	}
	return msg
}

func (e *startError) Unwrap() error        { return e.err }
func (e *startError) Is(target error) bool { return target == ErrStartFailed }
