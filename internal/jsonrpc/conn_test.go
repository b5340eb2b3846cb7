package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// pair connects two Conns with pipes and serves both until the test ends.
func pair(t *testing.T, a, b Handler) (*Conn, *Conn) {
	t.Helper()
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	ca := NewConn(ar, aw, a, Options{})
	cb := NewConn(br, bw, b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { ca.Serve(ctx); done <- struct{}{} }()
	go func() { cb.Serve(ctx); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		aw.Close()
		bw.Close()
		<-done
		<-done
	})
	return ca, cb
}

func TestCallBothWays(t *testing.T) {
	t.Parallel()
	var client *Conn
	server, c := pair(t, func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "add":
			var p struct{ A, B int }
			if err := req.Decode(&p); err != nil {
				return nil, err
			}
			// The server asks the client something while answering.
			var who string
			if err := client.Call(ctx, "whoami", nil, &who); err != nil {
				return nil, err
			}
			return map[string]any{"sum": p.A + p.B, "who": who}, nil
		}
		return nil, Errorf(CodeMethodNotFound, "no method %s", req.Method)
	}, func(ctx context.Context, req *Request) (any, error) {
		return "client", nil
	})
	_ = server
	client = server // the server's Conn calls the client side
	var res struct {
		Sum int
		Who string
	}
	if err := c.Call(context.Background(), "add", map[string]int{"a": 2, "b": 3}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Sum != 5 || res.Who != "client" {
		t.Fatalf("got %+v", res)
	}
	err := c.Call(context.Background(), "nope", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeMethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}
	err = c.Call(context.Background(), "add", "not an object", nil)
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidParams || !strings.Contains(rpcErr.Message, "add") {
		t.Fatalf("bad params: %v", err)
	}
}

// rawServe runs a Conn over the given input and returns every line it
// wrote, once the input is used up.
func rawServe(t *testing.T, input string, h Handler) []map[string]any {
	t.Helper()
	pr, pw := io.Pipe()
	c := NewConn(strings.NewReader(input), pw, h, Options{MaxMessage: 64})
	go func() { c.Serve(context.Background()); pw.Close() }()
	var out []map[string]any
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestMalformedInput(t *testing.T) {
	t.Parallel()
	echo := func(ctx context.Context, req *Request) (any, error) { return req.Method, nil }
	tests := []struct {
		name, input string
		code        float64
	}{
		{"not JSON", "{oops\n", CodeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"}]` + "\n", CodeInvalidRequest},
		{"too long", `{"id":1,"method":"` + strings.Repeat("x", 100) + `"}` + "\n", CodeParseError},
		{"no method", `{"id":7}` + "\n", CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := rawServe(t, tt.input, echo)
			if len(out) != 1 {
				t.Fatalf("want one answer, got %v", out)
			}
			e, _ := out[0]["error"].(map[string]any)
			if e == nil || e["code"] != tt.code || out[0]["jsonrpc"] != "2.0" {
				t.Fatalf("got %v", out[0])
			}
		})
	}
}

func TestRequestsWithoutVersionAndNotifications(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	out := rawServe(t, "\n"+`{"id":"a","method":"m1"}`+"\n"+`{"method":"note"}`+"\n", func(ctx context.Context, req *Request) (any, error) {
		got <- req.Method
		return nil, nil
	})
	if len(out) != 1 || out[0]["id"] != "a" {
		t.Fatalf("want one answer to id a, got %v", out)
	}
	if r, ok := out[0]["result"].(map[string]any); !ok || len(r) != 0 {
		t.Fatalf("a nil result is sent as {}: %v", out[0])
	}
	if len(got) != 2 {
		t.Fatalf("handler saw %d messages, want 2", len(got))
	}
}

func TestCloseCancelsHandlersAndCalls(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	started := make(chan struct{})
	ended := make(chan error, 1)
	c := NewConn(pr, io.Discard, func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}, Options{})
	served := make(chan error, 1)
	go func() { served <- c.Serve(context.Background()) }()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"long"}` + "\n"))
	<-started
	callErr := make(chan error, 1)
	go func() { callErr <- c.Call(context.Background(), "ask", nil, nil) }()
	time.Sleep(10 * time.Millisecond)
	pw.Close()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler context: %v", err)
	}
	if err := <-callErr; !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call: %v", err)
	}
	if err := c.Call(context.Background(), "late", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
}

func TestPeerCancelsRequest(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	started := make(chan struct{})
	c := NewConn(pr, outW, func(ctx context.Context, req *Request) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, Errorf(CodeRequestCancelled, "cancelled")
	}, Options{})
	go c.Serve(context.Background())
	defer pw.Close()
	pw.Write([]byte(`{"jsonrpc":"2.0","id":9,"method":"long"}` + "\n"))
	<-started
	pw.Write([]byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}` + "\n"))
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"id":9`) || !strings.Contains(line, "-32800") {
		t.Fatalf("got %s", line)
	}
}
