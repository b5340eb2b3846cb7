package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/secret"
	"github.com/mx-claw/mx-claw/internal/sse"
)

// fixture is a server on a temp home and workspace, with the fake model.
type fixture struct {
	t    testing.TB
	home string
	ws   string
	llm  *llmtest.Server
	app  *app.App
	srv  *Server
	ts   *httptest.Server
	// smallSockets gives the server's connections tiny send buffers.
	smallSockets bool
}

// testOptions are a server's options and the fixture's own.
type testOptions struct {
	Options
	smallSockets bool
	// config holds more top-level keys of config.json ("budget": ...);
	// settings is the user's settings.json.
	config, settings string
}

// smallSendBuffers gives every accepted connection a tiny send buffer, so
// a client that stops reading blocks the server's writes at once.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// newFixture starts a server; opts adjust its options.
func newFixture(t testing.TB, opts func(*testOptions), replies ...llmtest.Reply) *fixture {
	t.Helper()
	f := &fixture{t: t, home: t.TempDir(), llm: llmtest.NewTestServer(t, replies...)}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.ws = ws
	o := testOptions{Options: Options{HeartbeatInterval: time.Hour, PollInterval: 20 * time.Millisecond}}
	if opts != nil {
		opts(&o)
	}
	if o.settings != "" {
		if err := os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(o.settings), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	extra := ""
	if o.config != "" {
		extra = "," + o.config
	}
	cfg := fmt.Sprintf(`{"version":1%s,"activeProvider":"fake","providers":{"fake":{"name":"fake","kind":"custom","baseURL":%q,"model":"fake-model","models":["fake-model","other-model"],"apiKey":"","requiresApiKey":false,"configured":true},"keyed":{"name":"keyed","kind":"custom","baseURL":%q,"model":"k1","models":["k1"],"apiKey":"","requiresApiKey":true,"configured":true}}}`,
		extra, f.llm.URL(), f.llm.URL())
	if err := os.WriteFile(filepath.Join(f.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f.app = f.openApp()
	o.App = f.app
	f.srv, err = New(o.Options)
	if err != nil {
		t.Fatal(err)
	}
	f.smallSockets = o.smallSockets
	f.ts = httptest.NewUnstartedServer(f.srv.Handler())
	if o.smallSockets {
		f.ts.Listener = smallSendBuffers{f.ts.Listener}
	}
	f.ts.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		f.ts.Close()
	})
	return f
}

// openApp opens an app on the fixture's home, as another process would;
// its secrets live in the home's file store only.
func (f *fixture) openApp() *app.App {
	f.t.Helper()
	cfg, err := app.LoadConfig(f.home)
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := app.Open(context.Background(), f.home, cfg, app.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	a.Secrets, err = secret.New(secret.Options{Home: f.home, Backend: secret.BackendFile})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { a.Close() })
	return a
}

// port is the server's port.
func (f *fixture) port() string { return f.ts.URL[strings.LastIndex(f.ts.URL, ":")+1:] }

// request sends a request with the given headers; body, if not nil, is
// sent as JSON (a string or []byte as it is).
func (f *fixture) request(method, path string, body any, header http.Header) (*http.Response, []byte) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	c := *f.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp, data
}

// auth returns headers with the token and a JSON content type.
func (f *fixture) auth() http.Header {
	return http.Header{"Authorization": {"Bearer " + f.srv.Token()}, "Content-Type": {"application/json"}}
}

// api sends an authorized JSON request and decodes the answer into out
// (if not nil); it returns the status.
func (f *fixture) api(method, path string, body, out any) int {
	f.t.Helper()
	resp, data := f.request(method, path, body, f.auth())
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// mustAPI is api that fails the test unless the status is want.
func (f *fixture) mustAPI(method, path string, body, out any, want int) {
	f.t.Helper()
	var raw json.RawMessage
	st := f.api(method, path, body, &raw)
	if st != want {
		f.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, st, want, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			f.t.Fatal(err)
		}
	}
}

// newSession creates a session in the fixture's workspace.
func (f *fixture) newSession() protocol.Session {
	f.t.Helper()
	var s protocol.Session
	f.mustAPI("POST", "/api/sessions", protocol.CreateSession{Workspace: f.ws}, &s, http.StatusCreated)
	return s
}

// waitStatus waits until the stored session has status st.
func (f *fixture) waitStatus(id string, st protocol.SessionStatus) *protocol.Session {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := f.app.Store.GetSession(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		if s.Status == st {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("session %s: status %s after 20 s, want %s", id, s.Status, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitIdle waits until no turn of the server runs on the session and its
// stored status is not running.
func (f *fixture) waitIdle(id string) *protocol.Session {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := f.srv.runner(id)
		r.mu.Lock()
		running := r.running
		r.mu.Unlock()
		s, err := f.app.Store.GetSession(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		if !running && s.Status != protocol.StatusRunning && s.Status != protocol.StatusWaitingForApproval {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("session %s still busy after 20 s (%s)", id, s.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// client is an SSE client of one session's stream.
type client struct {
	t      testing.TB
	resp   *http.Response
	cancel context.CancelFunc
	events chan streamed
	// session is the stream's session; lastID the last id the reader
	// saw.
	session, lastID string
}

// streamed is one event read from a stream.
type streamed struct {
	id  string // the frame's own id field ("" for deltas)
	ev  protocol.Event
	err error
}

// stream opens the session's event stream; lastID, if not empty, is sent
// as Last-Event-ID.
func (f *fixture) stream(id, query, lastID string) *client {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", f.ts.URL+"/api/sessions/"+id+"/events"+query, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.srv.Token())
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		f.t.Fatalf("stream: status %d: %s", resp.StatusCode, data)
	}
	c := &client{t: f.t, resp: resp, cancel: cancel, events: make(chan streamed, 4096), session: id, lastID: lastID}
	go c.read()
	f.t.Cleanup(c.close)
	return c
}

// read parses frames as they come; the frame's own id is recovered from
// the raw stream by the reader's last-id rule (an id only changes on a
// frame that has one, and stored frames always have one).
func (c *client) read() {
	defer close(c.events)
	rd := sse.NewReader(c.resp.Body)
	for {
		e, err := rd.Next()
		if err != nil {
			return
		}
		var ev protocol.Event
		if err := json.Unmarshal([]byte(e.Data), &ev); err != nil {
			c.events <- streamed{err: fmt.Errorf("event %q: %v: %s", e.Event, err, e.Data)}
			return
		}
		if e.Event != string(ev.Type) {
			c.events <- streamed{err: fmt.Errorf("event: %q but data type %q", e.Event, ev.Type)}
			return
		}
		id := ""
		if ev.ParentSessionID != "" && ev.SessionID != c.session {
			// A subagent's event on its parent's stream: no id of its
			// own, so the last one stays the parent's.
			if e.ID != c.lastID {
				c.events <- streamed{err: fmt.Errorf("subagent's %s %d came with id %q", ev.Type, ev.Sequence, e.ID)}
				return
			}
		} else if ev.Sequence > 0 && ev.Type.Stored() && !strings.HasPrefix(string(ev.Type), "stream.") {
			id = e.ID
			if id != strconv.FormatInt(ev.Sequence, 10) {
				c.events <- streamed{err: fmt.Errorf("%s %d came with id %q", ev.Type, ev.Sequence, e.ID)}
				return
			}
		}
		c.lastID = e.ID
		c.events <- streamed{id: id, ev: ev}
	}
}

func (c *client) close() {
	c.cancel()
	c.resp.Body.Close()
}

// next returns the next event, failing the test after timeout.
func (c *client) next(timeout time.Duration) (protocol.Event, bool) {
	c.t.Helper()
	select {
	case s, ok := <-c.events:
		if !ok {
			return protocol.Event{}, false
		}
		if s.err != nil {
			c.t.Fatal(s.err)
		}
		return s.ev, true
	case <-time.After(timeout):
		c.t.Fatalf("no event in %v", timeout)
		return protocol.Event{}, false
	}
}

// until reads events until one of type typ (included) and returns them
// all.
func (c *client) until(typ protocol.EventType) []protocol.Event {
	c.t.Helper()
	var out []protocol.Event
	for {
		e, ok := c.next(20 * time.Second)
		if !ok {
			c.t.Fatalf("stream ended before %s; got %v", typ, typesOf(out))
		}
		out = append(out, e)
		if e.Type == typ {
			return out
		}
	}
}

func typesOf(evs []protocol.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Type)
	}
	return out
}

// storedEvents returns the session's stored events.
func (f *fixture) storedEvents(id string) []protocol.Event {
	f.t.Helper()
	evs, err := f.app.Store.Events(context.Background(), id, 0, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}
