package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// DefaultMaxMessage caps one incoming message (a line), in bytes, unless
// Options say otherwise. A prompt may carry embedded files.
const DefaultMaxMessage = 64 << 20

// Request is a request or a notification from the peer.
type Request struct {
	// ID is the request's id as sent; nil for a notification.
	ID     json.RawMessage
	Method string
	Params json.RawMessage
}

// IsNotification reports whether r expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Decode unmarshals the params into v. Its error is an invalid-params
// *Error that names the method.
func (r *Request) Decode(v any) error {
	params := r.Params
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return InvalidParams("%s: invalid params: %v", r.Method, err)
	}
	return nil
}

// Handler answers one request or notification. For a request, its result
// (nil is sent as {}) or its error is the answer; for a notification both
// are dropped. ctx is cancelled when the connection closes or the peer
// cancels the request.
//
// Requests are handled each on a goroutine of its own, so that a long one
// does not hold up the rest; notifications are handled one after another,
// in the order they came, on the goroutine that reads them, so the handler
// must not block on them.
type Handler func(ctx context.Context, req *Request) (result any, err error)

// Options configure a Conn.
type Options struct {
	// Logger receives protocol errors; discarded if nil.
	Logger *slog.Logger
	// MaxMessage caps an incoming line; DefaultMaxMessage if zero.
	MaxMessage int
}

// Conn is one JSON-RPC connection over a pair of byte streams. It is safe
// for concurrent use.
type Conn struct {
	r   io.Reader
	w   io.Writer
	h   Handler
	log *slog.Logger
	max int

	wmu sync.Mutex // serialises writes

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan *wireMsg       // our requests awaiting answers
	inflight map[string]context.CancelFunc // the peer's requests being handled
	closed   bool
	done     chan struct{}
}

// NewConn returns a connection reading messages from r and writing them to
// w; Serve starts it.
func NewConn(r io.Reader, w io.Writer, h Handler, opts Options) *Conn {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	max := opts.MaxMessage
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &Conn{r: r, w: w, h: h, log: log, max: max, pending: make(map[int64]chan *wireMsg),
		inflight: make(map[string]context.CancelFunc), done: make(chan struct{})}
}

// wireMsg is any JSON-RPC message as it appears on the wire.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Done is closed when the connection has stopped reading (the peer closed
// its end, or Serve's context ended).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Serve reads and dispatches messages until the input ends or ctx is done.
// Then it cancels the handlers still running, fails the calls still
// waiting with ErrClosed, waits for the handlers to return and returns
// nil at the end of the input, else the error that stopped it.
func (c *Conn) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- c.readLines(ctx, lines)
		close(lines)
	}()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case line, ok := <-lines:
			if !ok {
				err = <-readErr
				break loop
			}
			c.dispatch(ctx, &wg, line)
		}
	}
	c.mu.Lock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
	cancel()
	wg.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readLines sends each non-empty line of the input to out until the input
// ends (io.EOF) or fails. A line over the cap is answered with a parse
// error and skipped.
func (c *Conn) readLines(ctx context.Context, out chan<- []byte) error {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, tooLong, err := readLine(br, c.max)
		if tooLong {
			c.log.Warn("message over the size cap dropped", "max", c.max)
			c.send(&wireMsg{ID: json.RawMessage("null"), Error: Errorf(CodeParseError, "message larger than %d bytes", c.max)})
		} else if len(bytes.TrimSpace(line)) > 0 {
			select {
			case out <- line:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its newline, keeping at most max bytes;
// tooLong says the line was longer and is lost.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// dispatch handles one incoming line: a response to one of our calls, or a
// request or notification for the handler (on its own goroutine).
func (c *Conn) dispatch(ctx context.Context, wg *sync.WaitGroup, line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		c.send(&wireMsg{ID: json.RawMessage("null"), Error: Errorf(CodeInvalidRequest, "batches are not supported")})
		return
	}
	var m wireMsg
	if err := json.Unmarshal(trimmed, &m); err != nil {
		c.send(&wireMsg{ID: json.RawMessage("null"), Error: Errorf(CodeParseError, "parse error: %v", err)})
		return
	}
	if m.Method == "" {
		if m.ID != nil && (m.Result != nil || m.Error != nil) {
			c.answered(&m)
			return
		}
		if m.ID != nil && string(m.ID) != "null" {
			c.send(&wireMsg{ID: m.ID, Error: Errorf(CodeInvalidRequest, "a request needs a method")})
		}
		return
	}
	if m.ID != nil && string(m.ID) == "null" {
		m.ID = nil // an id of null is treated as a notification
	}
	req := &Request{ID: m.ID, Method: m.Method, Params: m.Params}
	if req.Method == "$/cancel_request" || req.Method == "$/cancelRequest" {
		c.cancelInflight(req)
		return
	}
	if req.ID == nil {
		// Notifications are handled in order, on the reading goroutine.
		if _, err := c.call(ctx, req); err != nil {
			c.log.Warn("notification failed", "method", req.Method, "err", err)
		}
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	key := string(req.ID)
	c.mu.Lock()
	c.inflight[key] = cancel
	c.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		result, err := c.call(rctx, req)
		c.mu.Lock()
		delete(c.inflight, key)
		c.mu.Unlock()
		c.reply(req, result, err)
	}()
}

// call runs the handler, turning a panic into an internal error.
func (c *Conn) call(ctx context.Context, req *Request) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked", "method", req.Method, "panic", r)
			err = Errorf(CodeInternalError, "internal error in %s", req.Method)
		}
	}()
	return c.h(ctx, req)
}

// reply sends the answer to a request.
func (c *Conn) reply(req *Request, result any, err error) {
	m := &wireMsg{ID: req.ID}
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		m.Error = rpcErr
	} else {
		if result == nil {
			result = struct{}{}
		}
		data, merr := json.Marshal(result)
		if merr != nil {
			m.Error = Errorf(CodeInternalError, "encode result of %s: %v", req.Method, merr)
		} else {
			m.Result = data
		}
	}
	if err := c.send(m); err != nil {
		c.log.Warn("send reply", "method", req.Method, "err", err)
	}
}

// cancelInflight cancels the peer's request named by a cancel
// notification's requestId (ACP) or id (LSP).
func (c *Conn) cancelInflight(req *Request) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
		ID        json.RawMessage `json:"id"`
	}
	if req.Decode(&p) != nil {
		return
	}
	id := p.RequestID
	if id == nil {
		id = p.ID
	}
	c.mu.Lock()
	cancel, ok := c.inflight[string(id)]
	c.mu.Unlock()
	if ok {
		cancel()
	}
}

// answered hands a response to the call waiting for it.
func (c *Conn) answered(m *wireMsg) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		c.log.Warn("response to an unknown id dropped", "id", string(m.ID))
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !ok {
		c.log.Warn("response to an unknown id dropped", "id", id)
		return
	}
	ch <- m
}

// Call sends a request to the peer and waits for its answer, which is
// decoded into result (unless nil). An error answer is returned as an
// *Error. If ctx ends first the call is abandoned (its late answer is
// dropped) and ctx's error returned.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	data, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode params of %s: %w", method, err)
	}
	ch := make(chan *wireMsg, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.send(&wireMsg{ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: data}); err != nil {
		forget()
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if result != nil && m.Result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("decode result of %s: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

// Notify sends a notification to the peer.
func (c *Conn) Notify(method string, params any) error {
	data, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode params of %s: %w", method, err)
	}
	return c.send(&wireMsg{Method: method, Params: data})
}

// send writes one message as one line.
func (c *Conn) send(m *wireMsg) error {
	m.JSONRPC = "2.0"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(buf.Bytes())
	return err
}
