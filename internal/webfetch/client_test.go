package webfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// publicAddr is the "public" address the test names resolve to: a
// documentation address that the stub dialer maps to the local server, so
// no packet leaves the machine.
var publicAddr = netip.MustParseAddr("203.0.113.10")

// stubNet is a resolver and dialer for tests: names resolve as answers
// say, and connections to publicAddr go to the test server.
type stubNet struct {
	t      *testing.T
	server string // host:port of the httptest server

	mu      sync.Mutex
	answers map[string][][]netip.Addr // name → answer per lookup (last repeats)
	lookups map[string]int
	dialed  []string
}

func newStubNet(t *testing.T, srv *httptest.Server) *stubNet {
	return &stubNet{t: t, server: srv.Listener.Addr().String(), answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
}

// name makes host resolve to addrs on successive lookups.
func (s *stubNet) name(host string, answers ...netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range answers {
		s.answers[host] = append(s.answers[host], []netip.Addr{a})
	}
}

func (s *stubNet) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ans, ok := s.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(s.lookups[host], len(ans)-1)
	s.lookups[host]++
	return ans[i], nil
}

func (s *stubNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dialed = append(s.dialed, addr)
	s.mu.Unlock()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	_, serverPort, _ := net.SplitHostPort(s.server)
	switch {
	case host == publicAddr.String() && port == serverPort, addr == s.server:
		return (&net.Dialer{}).DialContext(ctx, network, s.server)
	}
	return nil, fmt.Errorf("test dialer: refusing %s (only the test server can be reached)", addr)
}

func (s *stubNet) dials() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dialed...)
}

// fetcher returns a Fetcher on the stub network.
func (s *stubNet) fetcher() *Fetcher {
	return &Fetcher{Resolver: s, Dial: s.dial, Timeout: 10 * time.Second}
}

// publicURL is the test server's URL under a "public" name.
func (s *stubNet) publicURL(name, path string) string {
	_, port, _ := net.SplitHostPort(s.server)
	s.name(name, publicAddr)
	return "http://" + net.JoinHostPort(name, port) + path
}

const articleHTML = `<!doctype html>
<html><head><title>  The Guide
</title><style>body{color:red}</style><script>var secret = "script-text";</script></head>
<body>
<header><h1>Site banner</h1></header>
<nav><a href="/home">Home nav link</a></nav>
<main>
  <h1>Installing</h1>
  <p>Run the <code>install</code> step, then read <a href="/docs/next.html">the next page</a>.</p>
  <ul><li>first</li><li>second</li></ul>
  <pre><code class="language-go">fmt.Println("hi")</code></pre>
  <div hidden>hidden-text</div>
  <script>document.write("inline-script")</script>
</main>
<aside>Sidebar ad</aside>
<footer>Copyright footer</footer>
</body></html>`

func TestFetchHTMLToMarkdown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, articleHTML)
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	u := sn.publicURL("docs.example.test", "/guide/install.html")
	page, err := sn.fetcher().Fetch(context.Background(), u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "The Guide" || page.Type != "text/html" || page.URL != u || page.Status != 200 {
		t.Errorf("page = title %q type %q url %q status %d", page.Title, page.Type, page.URL, page.Status)
	}
	_, port, _ := net.SplitHostPort(sn.server)
	for _, want := range []string{
		"# Installing",
		"Run the `install` step",
		"[the next page](http://docs.example.test:" + port + "/docs/next.html)",
		"- first\n- second",
		"```go\nfmt.Println(\"hi\")\n```",
	} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("markdown lacks %q:\n%s", want, page.Text)
		}
	}
	for _, bad := range []string{"script-text", "inline-script", "color:red", "Site banner", "Home nav link", "Sidebar ad", "Copyright footer", "hidden-text"} {
		if strings.Contains(page.Text, bad) {
			t.Errorf("markdown keeps %q:\n%s", bad, page.Text)
		}
	}
}

func TestFetchBodyWithoutMainDropsChrome(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><nav>menu</nav><div role="navigation">more menu</div><h2>Body text</h2><p>para</p><footer>foot</footer></body></html>`)
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	page, err := sn.fetcher().Fetch(context.Background(), sn.publicURL("plain.example.test", "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Text != "## Body text\n\npara" {
		t.Errorf("text = %q", page.Text)
	}
}

func TestFetchTextJSONAndRefusedTypes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a": [1, 2], "b": "<p>not html</p>"}`)
		case "/notes.txt":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9 <b>as is</b>"))
		case "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			io.WriteString(w, "%PDF-1.7")
		case "/blob":
			w.Header()["Content-Type"] = nil // sniffed
			w.Write([]byte{0, 1, 2, 3, 0xff, 0xfe})
		}
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	f := sn.fetcher()
	ctx := context.Background()
	page, err := f.Fetch(ctx, sn.publicURL("api.example.test", "/data.json"), nil)
	if err != nil || page.Text != `{"a": [1, 2], "b": "<p>not html</p>"}` || page.Type != "application/json" {
		t.Errorf("json: %v %+v", err, page)
	}
	page, err = f.Fetch(ctx, sn.publicURL("api.example.test", "/notes.txt"), nil)
	if err != nil || page.Text != "café <b>as is</b>" {
		t.Errorf("text: %v %+v", err, page)
	}
	for path, typ := range map[string]string{"/doc.pdf": "application/pdf", "/blob": "application/octet-stream"} {
		_, err = f.Fetch(ctx, sn.publicURL("api.example.test", path), nil)
		var te *TypeError
		if !errors.As(err, &te) || te.Type != typ || !strings.Contains(err.Error(), typ) {
			t.Errorf("%s: err = %v, want a TypeError naming %s", path, err, typ)
		}
	}
}

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case r.URL.Path == "/b":
			http.Redirect(w, r, "/c", http.StatusFound)
		case r.URL.Path == "/c":
			io.WriteString(w, "final page")
		case strings.HasPrefix(r.URL.Path, "/loop"):
			http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
		case r.URL.Path == "/away":
			http.Redirect(w, r, "https://elsewhere.example.test/landing", http.StatusFound)
		case r.URL.Path == "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	f := sn.fetcher()
	ctx := context.Background()
	start := sn.publicURL("r.example.test", "/a")
	page, err := f.Fetch(ctx, start, nil)
	if err != nil {
		t.Fatal(err)
	}
	final := strings.TrimSuffix(start, "/a") + "/c"
	if page.URL != final || page.Text != "final page" || len(page.Redirects) != 2 || page.Redirects[0] != start {
		t.Errorf("chain: url %q text %q redirects %v", page.URL, page.Text, page.Redirects)
	}
	if _, err := f.Fetch(ctx, sn.publicURL("r.example.test", "/loop"), nil); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("loop: err = %v, want ErrTooManyRedirects", err)
	}
	page, err = f.Fetch(ctx, sn.publicURL("r.example.test", "/away"), nil)
	if err != nil || page.MovedTo != "https://elsewhere.example.test/landing" || page.Text != "" {
		t.Errorf("cross-host: %v %+v", err, page)
	}
	for _, d := range sn.dials() {
		if strings.HasPrefix(d, "elsewhere") {
			t.Errorf("dialed the other host: %s", d)
		}
	}
	if _, err := f.Fetch(ctx, sn.publicURL("r.example.test", "/file"), nil); !errors.Is(err, ErrScheme) {
		t.Errorf("redirect to file: err = %v, want ErrScheme", err)
	}
}

func TestFetchCapsTheBody(t *testing.T) {
	t.Parallel()
	const total = 50 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(total))
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for i := 0; i < total/len(line); i++ {
			if _, err := w.Write(line); err != nil {
				return // the client stopped reading
			}
		}
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	f := sn.fetcher()
	f.MaxBytes = 1 << 20
	page, err := f.Fetch(context.Background(), sn.publicURL("big.example.test", "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !page.Truncated || page.Size != 1<<20 || len(page.Text) != 1<<20 || page.Length != total {
		t.Errorf("truncated %v size %d len %d length %d", page.Truncated, page.Size, len(page.Text), page.Length)
	}
}

func TestFetchTimeLimit(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "first bytes")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	f := sn.fetcher()
	f.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := f.Fetch(context.Background(), sn.publicURL("slow.example.test", "/"), nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestFetchRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "internal secret")
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	_, port, _ := net.SplitHostPort(sn.server)
	sn.name("loopback.example.test", netip.MustParseAddr("127.0.0.1"))
	sn.name("mixed.example.test")
	sn.answers["mixed.example.test"] = [][]netip.Addr{{publicAddr, netip.MustParseAddr("10.1.2.3")}}
	sn.name("mapped.example.test", netip.MustParseAddr("::ffff:192.168.1.1"))
	tests := []struct {
		url, why string
	}{
		{"http://127.0.0.1:" + port + "/", "loopback"},
		{"http://127.9.9.9/", "loopback"},
		{"http://10.0.0.1/", "private"},
		{"http://172.16.5.4/", "private"},
		{"http://192.168.0.1/", "private"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://169.254.1.1/", "link-local"},
		{"http://[::1]:" + port + "/", "loopback"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fd00::1]/", "private"},
		{"http://[::ffff:127.0.0.1]/", "loopback"},
		{"http://[64:ff9b::a00:1]/", "private"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://100.64.0.1/", "shared (carrier-grade NAT)"},
		{"http://loopback.example.test:" + port + "/", "loopback"},
		{"http://mixed.example.test/", "private"},
		{"http://mapped.example.test/", "private"},
	}
	f := sn.fetcher()
	for _, tt := range tests {
		_, err := f.Fetch(context.Background(), tt.url, nil)
		var be *BlockedError
		if !errors.As(err, &be) || be.Why != tt.why || !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: err = %v, want a BlockedError (%s)", tt.url, err, tt.why)
		}
	}
	if d := sn.dials(); len(d) > 0 {
		t.Errorf("connections were made: %v", d)
	}
}

func TestFetchRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	f := &Fetcher{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		t.Errorf("dialed %s", addr)
		return nil, errors.New("no")
	}}
	for _, u := range []string{"file:///etc/passwd", "ftp://example.test/x", "gopher://example.test/", "data:text/plain,hi", "javascript:alert(1)", "example.test/no-scheme"} {
		if _, err := f.Fetch(context.Background(), u, nil); !errors.Is(err, ErrScheme) {
			t.Errorf("%s: err = %v, want ErrScheme", u, err)
		}
	}
	if _, err := f.Fetch(context.Background(), "http://user:pw@example.test/", nil); err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("credentials: err = %v", err)
	}
}

// TestFetchResolvesOnce: the name is resolved once and the connection goes
// to the address that was checked, even when a second answer would point
// at loopback (DNS rebinding).
func TestFetchResolvesOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "public content")
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	_, port, _ := net.SplitHostPort(sn.server)
	sn.name("rebind.example.test", publicAddr, netip.MustParseAddr("127.0.0.1"))
	page, err := sn.fetcher().Fetch(context.Background(), "http://rebind.example.test:"+port+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Text != "public content" {
		t.Errorf("text = %q", page.Text)
	}
	if n := sn.lookups["rebind.example.test"]; n != 1 {
		t.Errorf("resolved %d times, want once", n)
	}
	want := net.JoinHostPort(publicAddr.String(), port)
	for _, d := range sn.dials() {
		if d != want {
			t.Errorf("dialed %s, want only the checked address %s", d, want)
		}
	}
	// The other order: the first answer is loopback, so nothing is dialed.
	sn.name("rebind2.example.test", netip.MustParseAddr("127.0.0.1"), publicAddr)
	if _, err := sn.fetcher().Fetch(context.Background(), "http://rebind2.example.test:"+port+"/", nil); !errors.Is(err, ErrBlocked) {
		t.Errorf("loopback first: err = %v", err)
	}
}

func TestFetchTrustedHostMayBeLocal(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "local dev server")
	}))
	defer srv.Close()
	sn := newStubNet(t, srv)
	_, port, _ := net.SplitHostPort(sn.server)
	trusted := func(host string) bool { return host == "127.0.0.1" }
	page, err := sn.fetcher().Fetch(context.Background(), "http://127.0.0.1:"+port+"/", trusted)
	if err != nil || page.Text != "local dev server" {
		t.Fatalf("trusted: %v %+v", err, page)
	}
	if _, err := sn.fetcher().Fetch(context.Background(), "http://127.0.0.2/", trusted); !errors.Is(err, ErrBlocked) {
		t.Errorf("another loopback address: err = %v", err)
	}
}

func TestFetchThroughProxy(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String())
		mu.Unlock()
		io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	sn := newStubNet(t, proxy)
	pu, _ := url.Parse(proxy.URL)
	f := sn.fetcher()
	f.Proxy = func(u *url.URL) (*url.URL, error) { return pu, nil }
	sn.name("proxied.example.test", publicAddr)
	page, err := f.Fetch(context.Background(), "http://proxied.example.test/page", nil)
	if err != nil || page.Text != "via proxy" {
		t.Fatalf("fetch: %v %+v", err, page)
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) != 1 || got[0] != "http://proxied.example.test/page" {
		t.Errorf("proxy saw %v", got)
	}
	// The target is still checked when a proxy resolves it.
	if _, err := f.Fetch(context.Background(), "http://10.0.0.1/", nil); !errors.Is(err, ErrBlocked) {
		t.Errorf("private target through the proxy: err = %v", err)
	}
}
