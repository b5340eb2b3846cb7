package webfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpproxy"
)

// Defaults of a Fetcher.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
	DefaultUserAgent    = "mx-claw (web_fetch; +coding agent)"
)

// Resolver looks host names up. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Fetcher fetches pages. Its zero value is ready to use: the system
// resolver, a plain dialer, no proxy and the default limits. A Fetcher is
// safe for concurrent use; it keeps no connection between fetches.
type Fetcher struct {
	// Resolver resolves host names; net.DefaultResolver if nil.
	Resolver Resolver
	// Dial opens connections to the addresses the Resolver gave (always
	// an IP address and a port, never a name) and to proxies; a
	// net.Dialer if nil.
	Dial DialFunc
	// Proxy chooses the proxy for a URL, nil for none (see
	// ProxyFromEnvironment).
	Proxy func(*url.URL) (*url.URL, error)
	// MaxBytes caps the body read; DefaultMaxBytes if zero. A longer body
	// is cut there and the page says so.
	MaxBytes int64
	// Timeout bounds the whole fetch, redirects and body included;
	// DefaultTimeout if zero.
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed; DefaultMaxRedirects if
	// zero.
	MaxRedirects int
	// UserAgent is sent with each request; DefaultUserAgent if empty.
	UserAgent string
}

// ProxyFromEnvironment returns the proxy choice of HTTP_PROXY,
// HTTPS_PROXY and NO_PROXY (and their lower-case forms) as they are now.
func ProxyFromEnvironment() func(*url.URL) (*url.URL, error) {
	cfg := httpproxy.FromEnvironment()
	if cfg.HTTPProxy == "" && cfg.HTTPSProxy == "" {
		return nil
	}
	return cfg.ProxyFunc()
}

// Page is what a fetch got.
type Page struct {
	// URL is the URL the content came from, after redirects.
	URL string
	// Status is the HTTP status code, and StatusText its line
	// ("404 Not Found").
	Status     int
	StatusText string
	// Type is the response's media type, such as "text/html".
	Type string
	// Title is an HTML page's title.
	Title string
	// Text is the content: Markdown for HTML, the body for text and JSON.
	Text string
	// Truncated says the body was longer than the cap and was cut; Size
	// is how many bytes were read, Length the length the server
	// announced (-1 if it did not).
	Truncated bool
	Size      int64
	Length    int64
	// Redirects are the URLs redirected from, in order.
	Redirects []string
	// MovedTo is set when the server redirected to another host, which is
	// not followed; Text is then empty.
	MovedTo string
}

// Fetch gets rawURL and returns its content as text. trusted reports
// whether a permission rule names a host; a host it trusts may be on a
// loopback, private or link-local address. It may be nil.
//
// Errors match ErrScheme, ErrBlocked, ErrType, ErrTooManyRedirects or
// ErrTimeout where they apply; an HTTP error status is not an error (the
// page carries it).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, trusted func(host string) bool) (*Page, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if trusted == nil {
		trusted = func(string) bool { return false }
	}
	timeout := cmpOr(f.Timeout, DefaultTimeout)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w (%s)", ErrTimeout, timeout))
	defer cancel()

	g := &guard{f: f, trusted: trusted, proxies: map[string]bool{}}
	tr := &http.Transport{
		Proxy:                  g.proxy,
		DialContext:            g.dial,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    timeout,
		MaxResponseHeaderBytes: 1 << 20,
		DisableCompression:     false,
	}
	defer tr.CloseIdleConnections()
	page := &Page{Length: -1}
	maxRedirects := cmpOr(f.MaxRedirects, DefaultMaxRedirects)
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("%w: redirected to %s", ErrScheme, req.URL.Redacted())
		}
		if len(via) > maxRedirects {
			return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, maxRedirects)
		}
		if !strings.EqualFold(req.URL.Hostname(), via[0].URL.Hostname()) {
			page.MovedTo = req.URL.String()
			return http.ErrUseLastResponse
		}
		page.Redirects = append(page.Redirects, via[len(via)-1].URL.String())
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", cmpOr(f.UserAgent, DefaultUserAgent))
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fetchError(ctx, err)
	}
	defer resp.Body.Close()
	page.URL = resp.Request.URL.String()
	page.Status, page.StatusText = resp.StatusCode, resp.Status
	page.Length = resp.ContentLength
	if page.MovedTo != "" {
		return page, nil
	}
	if err := f.read(ctx, resp, page); err != nil {
		return nil, err
	}
	return page, nil
}

// read reads the body of resp into page, within the cap, and converts it.
func (f *Fetcher) read(ctx context.Context, resp *http.Response, page *Page) error {
	max := cmpOr(f.MaxBytes, DefaultMaxBytes)
	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	mediaType = strings.ToLower(mediaType)
	if mediaType != "" && kindOf(mediaType) == kindOther {
		// Refused before the body is read.
		return &TypeError{Type: mediaType}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return fetchError(ctx, err)
	}
	if int64(len(body)) > max {
		body, page.Truncated = body[:max], true
	}
	page.Size = int64(len(body))
	if mediaType == "" {
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(body))
		if kindOf(mediaType) == kindOther {
			return &TypeError{Type: mediaType}
		}
	}
	page.Type = mediaType
	text := decodeText(body, params["charset"])
	if kindOf(mediaType) == kindHTML {
		title, md, err := htmlToMarkdown(text, resp.Request.URL)
		if err != nil {
			return fmt.Errorf("convert HTML: %w", err)
		}
		page.Title, page.Text = title, md
		return nil
	}
	page.Text = text
	return nil
}

// The kinds of content a fetch reads.
const (
	kindOther = iota
	kindHTML
	kindText
)

// kindOf tells what a media type is to a fetch.
func kindOf(mediaType string) int {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return kindHTML
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"),
		mediaType == "application/javascript", mediaType == "application/x-ndjson",
		mediaType == "application/yaml", mediaType == "application/toml":
		return kindText
	}
	return kindOther
}

// decodeText returns body as UTF-8: Latin-1 (and its Windows superset,
// for the printable range) is converted; anything else invalid becomes
// U+FFFD.
func decodeText(body []byte, charset string) string {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "us-ascii":
		if !utf8.Valid(body) {
			r := make([]rune, len(body))
			for i, b := range body {
				r[i] = rune(b)
			}
			return string(r)
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// parseURL checks that raw is an absolute http or https URL with a host.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("%w: %q has no scheme (write https://…)", ErrScheme, raw)
	default:
		return nil, fmt.Errorf("%w, not %s URLs", ErrScheme, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("invalid URL: credentials in a URL are not sent")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Fragment = ""
	return u, nil
}

// fetchError describes an error of a request or a body read, naming the
// time limit when that is what ended it.
func fetchError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrTimeout) {
		return cause
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// The error of the guard or the redirect policy, without the
		// "Get URL:" wrapping.
		if errors.Is(ue.Err, ErrBlocked) || errors.Is(ue.Err, ErrScheme) || errors.Is(ue.Err, ErrTooManyRedirects) {
			return ue.Err
		}
	}
	return err
}

// guard dials for one fetch: every connection goes to an address checked
// here, except those to the proxies the fetch uses.
type guard struct {
	f       *Fetcher
	trusted func(host string) bool

	mu      sync.Mutex
	proxies map[string]bool // host:port of the proxies chosen so far
}

// proxy is the transport's proxy choice: it checks the target (which the
// proxy will resolve) and remembers the proxy's address as one to dial.
func (g *guard) proxy(req *http.Request) (*url.URL, error) {
	if g.f.Proxy == nil {
		return nil, nil
	}
	p, err := g.f.Proxy(req.URL)
	if err != nil || p == nil {
		return nil, err
	}
	if _, err := g.resolve(req.Context(), req.URL.Hostname()); err != nil {
		return nil, err
	}
	port := p.Port()
	if port == "" {
		port = map[string]string{"https": "443", "socks5": "1080", "socks5h": "1080"}[p.Scheme]
		if port == "" {
			port = "80"
		}
	}
	g.mu.Lock()
	g.proxies[net.JoinHostPort(p.Hostname(), port)] = true
	g.mu.Unlock()
	return p, nil
}

// dial connects to addr: a proxy as it is, anything else through the
// address its host resolves to, once checked.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := g.f.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	g.mu.Lock()
	isProxy := g.proxies[addr]
	g.mu.Unlock()
	if isProxy {
		return dial(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var firstErr error
	for _, a := range addrs {
		c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// resolve returns the addresses of host (itself if it is an address),
// refusing them all if one is not public and no rule trusts the host.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := g.f.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
	}
	if g.trusted(strings.ToLower(strings.TrimSuffix(host, "."))) {
		return addrs, nil
	}
	for _, a := range addrs {
		if why := blocked(a); why != "" {
			return nil, &BlockedError{Host: host, Addr: a.Unmap().String(), Why: why}
		}
	}
	return addrs, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
