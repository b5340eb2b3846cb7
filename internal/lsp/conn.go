package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// maxMessage caps one message from a server.
const maxMessage = 64 << 20

// errClosed is returned for calls on a connection that has ended.
var errClosed = errors.New("the language server's connection is closed")

// message is any JSON-RPC message.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// conn is a JSON-RPC connection with Content-Length framing. Writes are
// serialised; one goroutine (read) reads.
type conn struct {
	w io.Writer
	// notify handles a notification from the server; request answers one
	// of its requests. Both run on the reading goroutine.
	notify  func(method string, params json.RawMessage)
	request func(method string, params json.RawMessage) (any, error)

	wmu sync.Mutex
	mu  sync.Mutex
	// next is the id of the next call; calls are the calls waiting for
	// their answers.
	next  int64
	calls map[string]chan *message
	done  chan struct{}
	err   error
}

func newConn(w io.Writer) *conn {
	return &conn{w: w, calls: make(map[string]chan *message), done: make(chan struct{})}
}

// read reads messages from r until it ends, then fails every waiting call.
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var m *message
		if m, err = readMessage(br); err != nil {
			break
		}
		c.dispatch(m)
	}
	c.mu.Lock()
	c.err = err
	calls := c.calls
	c.calls = map[string]chan *message{}
	c.mu.Unlock()
	for _, ch := range calls {
		close(ch)
	}
	close(c.done)
}

// readMessage reads one framed message.
func readMessage(br *bufio.Reader) (*message, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxMessage {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a message without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, err
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("a message that is not JSON: %w", err)
	}
	return &m, nil
}

func (c *conn) dispatch(m *message) {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		var res any
		var err error
		if c.request != nil {
			res, err = c.request(m.Method, m.Params)
		} else {
			err = &rpcError{Code: -32601, Message: "method not found: " + m.Method}
		}
		reply := &message{JSONRPC: "2.0", ID: m.ID}
		if err != nil {
			var re *rpcError
			if !errors.As(err, &re) {
				re = &rpcError{Code: -32603, Message: err.Error()}
			}
			reply.Error = re
		} else {
			raw, _ := json.Marshal(res)
			reply.Result = raw
		}
		_ = c.send(reply)
	case m.Method != "":
		if c.notify != nil {
			c.notify(m.Method, m.Params)
		}
	default:
		c.mu.Lock()
		ch, ok := c.calls[string(m.ID)]
		delete(c.calls, string(m.ID))
		c.mu.Unlock()
		if ok {
			ch <- m
		}
	}
}

// send writes one message.
func (c *conn) send(m *message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(buf.Bytes())
	return err
}

// Notify sends a notification.
func (c *conn) Notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.send(&message{JSONRPC: "2.0", Method: method, Params: raw})
}

// Call sends a request and waits for its answer, decoded into result
// (which may be nil).
func (c *conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil || isClosed(c.done) {
		c.mu.Unlock()
		return errClosed
	}
	c.next++
	id := json.RawMessage(strconv.FormatInt(c.next, 10))
	ch := make(chan *message, 1)
	c.calls[string(id)] = ch
	c.mu.Unlock()
	if err := c.send(&message{JSONRPC: "2.0", ID: id, Method: method, Params: raw}); err != nil {
		c.mu.Lock()
		delete(c.calls, string(id))
		c.mu.Unlock()
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return errClosed
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.calls, string(id))
		c.mu.Unlock()
		_ = c.Notify("$/cancelRequest", map[string]any{"id": id})
		return ctx.Err()
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
