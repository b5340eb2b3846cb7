package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root, such as "https://api.openai.com/v1" or
	// "http://127.0.0.1:1234/v1"; the client posts to
	// BaseURL + "/chat/completions". A trailing slash, or a trailing
	// "/chat/completions", is tolerated.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer APIKey" when it is not
	// empty. It never appears in errors.
	APIKey string
	// HTTPClient sends the requests; nil means a client of the Client's
	// own, which opens connections ahead of time for servers that close
	// each one (see "Connections" in the package doc). Its
	// Timeout, if any, also bounds reading the stream, so leave it 0 and
	// use the context instead.
	HTTPClient *http.Client
	// Retry is the retry policy; the zero value means
	// llm.DefaultRetryPolicy().
	Retry llm.RetryPolicy
	// Headers are added to every request, after the client's own (so they
	// may replace Content-Type or Authorization, for gateways that want
	// an "api-key" header instead).
	Headers map[string]string
	// Sleep waits between attempts; nil means llm.Sleep. It must return
	// ctx's error at once when ctx ends. Tests inject it to record delays.
	Sleep func(ctx context.Context, d time.Duration) error
	// IdleTimeout is how long an attempt may wait for the response's
	// headers or the next piece of its stream; 0 means
	// llm.DefaultIdleTimeout, a negative value waits forever. A stalled
	// attempt is retried like a connection failure (the partial answer is
	// dropped), and fails with an *llm.StallError when retries run out.
	IdleTimeout time.Duration
}

// Client is an llm.Client for one OpenAI-compatible server. It is safe for
// concurrent use.
type Client struct {
	url     string
	apiKey  string
	http    *http.Client
	retry   llm.RetryPolicy
	headers [][2]string
	sleep   func(ctx context.Context, d time.Duration) error
	now     func() time.Time
	idle    time.Duration
	// decoders holds *decoder values between streams.
	decoders sync.Pool
	// spare opens the next connection early when the server closes each
	// one; nil when the caller brought its own HTTPClient.
	spare     *spareDialer
	transport *http.Transport
	// sent is set once a request went out; Warm does nothing after that.
	sent atomic.Bool
}

var (
	_ llm.Client = (*Client)(nil)
	_ llm.Warmer = (*Client)(nil)
)

// New returns a client for cfg. It does not contact the server.
func New(cfg Config) *Client {
	base := strings.TrimRight(cfg.BaseURL, "/")
	base = strings.TrimSuffix(base, "/chat/completions")
	c := &Client{
		url:    base + "/chat/completions",
		apiKey: cfg.APIKey,
		http:   cfg.HTTPClient,
		retry:  cfg.Retry.OrDefault(),
		sleep:  cfg.Sleep,
		now:    time.Now,
		idle:   cfg.IdleTimeout,
	}
	if c.idle == 0 {
		c.idle = llm.DefaultIdleTimeout
	}
	if c.http == nil {
		c.spare = newSpareDialer()
		c.transport = http.DefaultTransport.(*http.Transport).Clone()
		c.transport.DialContext = c.spare.DialContext
		c.http = &http.Client{Transport: c.transport}
	}
	if c.sleep == nil {
		c.sleep = llm.Sleep
	}
	for k, v := range cfg.Headers {
		c.headers = append(c.headers, [2]string{http.CanonicalHeaderKey(k), v})
	}
	return c
}

// Stream implements llm.Client. It posts req with stream set and returns
// the assembled response.
//
// Errors: a non-2xx answer is an *llm.APIError; a failure after the
// stream started is an *llm.StreamError; a connection failure wraps the
// transport's error; when ctx ends, ctx.Err() is returned as it is.
// Retryable failures are retried first, per the Config's policy, each
// announced to onDelta as an llm.DeltaRetry before the wait.
func (c *Client) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	body := appendRequest(make([]byte, 0, requestSize(req)), req)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := watch(ctx, c.idle)
		resp, retryAfter, err := c.send(w.ctx, body)
		if err == nil {
			resp.Body = w.body(resp.Body)
			var out *llm.Response
			out, err = c.read(w.ctx, resp, req, onDelta) // closes the body, and so ends w
			if err == nil || !w.stalled() || ctx.Err() != nil {
				if err != nil && ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return out, err
			}
		}
		stalled := w.stalled() && ctx.Err() == nil
		if stalled {
			err = &llm.StallError{After: c.idle, Started: w.read.Load()}
		}
		w.stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !stalled && !retryable(err) {
			return nil, err
		}
		delay, ok := c.retry.Next(attempt, retryAfter)
		if !ok {
			return nil, err
		}
		if onDelta != nil {
			onDelta(llm.Delta{Kind: llm.DeltaRetry, Attempt: attempt, Err: err, Delay: int64(delay)})
		}
		if err := c.sleep(ctx, delay); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
}

// Warm implements llm.Warmer: before the client's first request it dials
// the server in the background, so that the connection (and the server's
// side of it) is ready when the request comes. Later calls, and clients
// with a caller's HTTPClient, do nothing.
func (c *Client) Warm() {
	if c.spare == nil || c.sent.Load() {
		return
	}
	req, err := http.NewRequest(http.MethodPost, c.url, nil)
	if err != nil {
		return
	}
	if addr := dialAddr(c.transport, req); addr != "" {
		c.spare.prepare(addr)
	}
}

// send makes one attempt. It returns the response only for a 2xx status;
// for any other it returns an *llm.APIError and the Retry-After wait.
func (c *Client) send(ctx context.Context, body []byte) (*http.Response, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("build request: %w", err)
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	if c.apiKey != "" {
		h.Set("Authorization", "Bearer "+c.apiKey)
	}
	for _, kv := range c.headers {
		h[kv[0]] = []string{kv[1]}
	}
	c.sent.Store(true)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, 0, &connError{err: err}
	}
	if resp.Close && c.spare != nil {
		// This connection ends with the response; the next step's is
		// opened while the agent works.
		if addr := dialAddr(c.transport, hreq); addr != "" {
			c.spare.prepare(addr)
		}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, 0, nil
	}
	defer resp.Body.Close()
	// Read a little more than the error keeps, so that a JSON error with
	// a long field (Groq's failed_generation) still parses.
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorReadLimit))
	retryAfter := c.retryAfter(resp.Header)
	apiErr := llm.NewAPIError(resp.StatusCode, raw, retryAfter)
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		apiErr.Retryable = true
	case "false":
		apiErr.Retryable = false
	}
	return nil, retryAfter, apiErr
}

// errorReadLimit bounds how much of an error body is read.
const errorReadLimit = 16 << 10

// retryAfter returns the wait a response asks for: OpenAI's
// retry-after-ms, else Retry-After, else 0.
func (c *Client) retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms <= 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	d, _ := llm.ParseRetryAfter(h.Get("Retry-After"), c.now())
	return d
}

// read decodes a 2xx response and closes its body.
func (c *Client) read(ctx context.Context, resp *http.Response, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); len(ct) >= 16 && strings.EqualFold(ct[:16], "application/json") {
		return nil, jsonInsteadOfStream(resp)
	}
	d, _ := c.decoders.Get().(*decoder)
	if d == nil {
		d = new(decoder)
	}
	d.reset(resp.Body, onDelta)
	d.limit(req)
	out, err := d.run(ctx)
	if err != nil {
		// The decoder may be mid-value; let it go.
		return nil, err
	}
	d.reset(nil, nil)
	c.decoders.Put(d)
	// The response is complete; the agent need not wait for the end of the
	// body (a server may still be logging before it closes it).
	go drain(resp.Body)
	return out, nil
}

// jsonInsteadOfStream explains a 2xx JSON body where a stream was asked
// for: usually an error some gateways send with status 200, else a
// server that ignored "stream":true.
func jsonInsteadOfStream(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorReadLimit))
	if p, ok := llm.ParseErrorPayload(raw); ok {
		return &llm.StreamError{Type: p.Type, Code: p.Code, Message: p.Message, Status: p.Status}
	}
	return &llm.StreamError{Err: fmt.Errorf("%w: the server sent JSON, not an event stream; it may not support streaming", llm.ErrIncompleteStream)}
}

// drain reads the rest of a finished stream (normally nothing more than
// the end of the chunked body), so the connection can be reused. It gives
// up after a bound, closing the connection instead. It runs in its own
// goroutine: the caller already has the whole response.
func drain(body io.ReadCloser) {
	t := time.AfterFunc(100*time.Millisecond, func() { body.Close() })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, 64<<10)
}

// connError is a failure to get a response at all.
type connError struct{ err error }

func (e *connError) Error() string { return "send request: " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// retryable reports whether an attempt that failed with err may be sent
// again.
func retryable(err error) bool {
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Retryable
	}
	var ce *connError
	if !errors.As(err, &ce) {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	if errors.As(err, &certErr) || errors.As(err, &recErr) {
		return false
	}
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &opErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &netErr):
		return netErr.Timeout()
	}
	return false
}
