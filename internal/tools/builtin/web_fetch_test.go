package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/webfetch"
)

// loopbackNames resolves every name to 127.0.0.1: the test server.
type loopbackNames struct{}

func (loopbackNames) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestWebFetchDomainRuleNamesTheHost: a rule naming allowed.com lets
// web_fetch reach it on a local address; allowed.com.evil.net, which
// resolves to the same address, is refused.
func TestWebFetchDomainRuleNamesTheHost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><title>Allowed</title></head><body><main><h2>Hello</h2><p>from `+r.Host+`</p></main></body></html>`)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, err := permission.NewPolicy(permission.Options{User: &permission.Settings{
		Path: "settings.json", Allow: []permission.Rule{permission.MustParseRule("web_fetch(domain:allowed.com)")}}})
	if err != nil {
		t.Fatal(err)
	}
	tool := NewWebFetch(&webfetch.Fetcher{Resolver: loopbackNames{}})
	env, _ := newEnv(t)
	env.TrustedHost = p.NamesHost

	out, err := run(t, tool, env, `{"url":"http://docs.allowed.com:`+port+`/page"}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"URL: http://docs.allowed.com:" + port + "/page", "Title: Allowed", "Content-Type: text/html, shown as Markdown", "## Hello"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	_, err = tool.Run(context.Background(), env, json.RawMessage(`{"url":"http://allowed.com.evil.net:`+port+`/"}`))
	if !errors.Is(err, webfetch.ErrBlocked) || !strings.Contains(err.Error(), "web_fetch(domain:allowed.com.evil.net)") {
		t.Errorf("allowed.com.evil.net: err = %v", err)
	}
	if got := tool.Summary(json.RawMessage(`{"url":"https://docs.python.org/3/"}`)); got != "Fetch https://docs.python.org/3/" {
		t.Errorf("Summary = %q", got)
	}
}

// TestWebFetchLongPageIsKept: a page longer than the result shows is cut
// at a line end and kept whole for read_tool_output.
func TestWebFetchLongPageIsKept(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line of text\n", 3*maxFetchOutput/13)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, long)
	}))
	defer srv.Close()
	tool := NewWebFetch(&webfetch.Fetcher{Resolver: loopbackNames{}})
	env, _ := newEnv(t)
	env.TrustedHost = func(string) bool { return true }
	env.Outputs = &tools.OutputFiles{Dir: t.TempDir()}
	env.CallID = "call_1"
	out, err := run(t, tool, env, `{"url":"`+srv.URL+`/"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > maxFetchOutput+1024 || !strings.Contains(out, `read_tool_output call_id="call_1"`) {
		t.Errorf("result of %d bytes, ends %q", len(out), out[max(0, len(out)-200):])
	}
	f, err := env.Outputs.Open("call_1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kept, _ := io.ReadAll(f)
	if string(kept) != long {
		t.Errorf("kept %d bytes, want %d", len(kept), len(long))
	}
}
