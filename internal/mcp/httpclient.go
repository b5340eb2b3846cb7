package mcp

import (
	"io"
	"mime"
	"net/http"
	"sync/atomic"
)

// httpTransport is the round tripper of an HTTP server's connection: it
// adds the entry's headers to every request and caps what one message of
// a response may take — the whole body of a JSON response, each event of
// an event stream — failing the read past the cap and flagging it.
type httpTransport struct {
	base    http.RoundTripper
	headers map[string]string
	limit   int
	over    *atomic.Bool
}

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &bodyLimit{rc: resp.Body, limit: t.limit, events: mt == "text/event-stream", over: t.over}
	return resp, nil
}

// bodyLimit counts the bytes of the current message: since the start of
// the body, or, in an event stream, since the last blank line.
type bodyLimit struct {
	rc     io.ReadCloser
	limit  int
	events bool
	n      int
	nl     bool // the last byte (other than \r) was a newline
	over   *atomic.Bool
}

func (b *bodyLimit) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	for _, c := range p[:n] {
		if b.events && c == '\r' {
			continue
		}
		if b.events && c == '\n' {
			if b.nl {
				b.n = 0
			}
			b.nl = true
			continue
		}
		b.nl = false
		b.n++
		if b.limit > 0 && b.n > b.limit {
			b.over.Store(true)
			return 0, ErrResultTooLarge
		}
	}
	return n, err
}

func (b *bodyLimit) Close() error { return b.rc.Close() }
