package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultModel is the model GET /v1/models lists unless told otherwise,
// and the model chunks name when a request names none.
const DefaultModel = "fake-model"

// Responder decides the reply to a chat request when the queue is empty.
// It may be called from several goroutines at once, and it must not call
// Close.
type Responder func(req *Request) Reply

// Server is a fake OpenAI-compatible model server. Its methods are safe
// for concurrent use, and it serves concurrent requests.
//
// Chat requests take replies from a FIFO queue (see Enqueue) and fall back
// to the Responder when it is empty. Every request is recorded (see
// Requests) before it is answered.
type Server struct {
	done      chan struct{} // closed by Close; unblocks hanging handlers
	closeOnce sync.Once
	active    sync.WaitGroup // handlers running; Add only under mu, before closed

	srv    *http.Server  // nil when unstarted
	served chan struct{} // closed when srv.Serve returns
	url    string

	nextChat atomic.Int64 // chatcmpl id counter
	nextCall atomic.Int64 // tool-call id counter

	mu        sync.Mutex
	closed    bool
	queue     []Reply
	responder Responder
	models    []string
	requests  []Request
	noBodies  bool
	onRequest func(*Request)
	closeEach bool // answer with "Connection: close"
	// noChecks turns off CheckChat on chat requests; violations are
	// what it found.
	noChecks   bool
	violations []string

	conns    atomic.Int64 // connections accepted (servers that listen)
	accepted sync.Map     // remote address → time.Time its connection was accepted
}

// NewServer starts a Server on a loopback port, with replies queued. Like
// httptest.NewServer it panics if it cannot listen. Call Close when done.
func NewServer(replies ...Reply) *Server {
	s, err := Listen("127.0.0.1:0", replies...)
	if err != nil {
		panic(fmt.Sprintf("llmtest: %v", err))
	}
	return s
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a free port), with
// replies queued. Call Close when done.
func Listen(addr string, replies ...Reply) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := NewUnstarted(replies...)
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				s.conns.Add(1)
				s.accepted.Store(c.RemoteAddr().String(), time.Now())
			case http.StateClosed, http.StateHijacked:
				s.accepted.Delete(c.RemoteAddr().String())
			}
		}}
	s.served = make(chan struct{})
	s.url = "http://" + ln.Addr().String() + "/v1"
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// NewUnstarted returns a Server that does not listen, with replies queued.
// Serve its Handler yourself; URL is "". Close still unblocks and waits for
// its handlers.
func NewUnstarted(replies ...Reply) *Server {
	return &Server{
		done:   make(chan struct{}),
		queue:  append([]Reply(nil), replies...),
		models: []string{DefaultModel},
	}
}

// Handler returns the http.Handler that answers the server's routes:
// GET /v1/models, GET /v1/models/{id} and POST /v1/chat/completions.
// Anything else gets an OpenAI-style 404 or 405. Requests that arrive
// after Close get 503.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// URL returns the base URL clients are given, "http://127.0.0.1:PORT/v1".
func (s *Server) URL() string { return s.url }

// Enqueue appends replies to the queue. Each chat request takes the first.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// SetCloseConnections makes every answer end its connection
// ("Connection: close"), as some simple servers and gateways do, or stops
// that.
func (s *Server) SetCloseConnections(on bool) {
	s.mu.Lock()
	s.closeEach = on
	s.mu.Unlock()
}

// Connections returns how many connections the server has accepted (0
// for an unstarted one).
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Pending returns how many queued replies have not been served yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// SetResponder sets the fallback used when the queue is empty. nil
// restores the default, a text reply "ok".
func (s *Server) SetResponder(f Responder) {
	s.mu.Lock()
	s.responder = f
	s.mu.Unlock()
}

// SetModels sets the model ids GET /v1/models lists, in order. The first
// is also the model chunks name when a request names none.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = append([]string(nil), ids...)
	s.mu.Unlock()
}

// RecordBodies says whether recorded requests keep their body and chat
// messages (the default). Turn it off for long runs such as benchmarks,
// where every request repeats the whole history; it applies to requests
// that arrive afterwards.
func (s *Server) RecordBodies(on bool) {
	s.mu.Lock()
	s.noBodies = !on
	s.mu.Unlock()
}

// OnRequest sets a function called with every request before it is
// answered, with its messages whatever RecordBodies says (but its Body
// only when bodies are recorded). It may be called from several
// goroutines at once and must not keep req.
func (s *Server) OnRequest(f func(req *Request)) {
	s.mu.Lock()
	s.onRequest = f
	s.mu.Unlock()
}

// Requests returns a copy of the list of requests received so far, of any
// method and path, in the order they were recorded (arrival order, for
// requests that do not overlap).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ChatRequests returns the POST /v1/chat/completions requests among
// Requests.
func (s *Server) ChatRequests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Method == http.MethodPost && r.Path == chatPath {
			out = append(out, r)
		}
	}
	return out
}

// Close stops the server: it stops listening, breaks off hanging and
// delayed streams and open connections, and returns once every handler
// has returned. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		if s.srv != nil {
			_ = s.srv.Close()
			<-s.served
		}
		s.active.Wait()
	})
}

const (
	chatPath   = "/v1/chat/completions"
	modelsPath = "/v1/models"
)

// enter registers a running handler; it reports false after Close.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active.Add(1)
	return true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		writeError(w, http.StatusServiceUnavailable, "fakellm: server closed", "server_error")
		return
	}
	defer s.active.Done()

	s.mu.Lock()
	closeEach := s.closeEach
	s.mu.Unlock()
	if closeEach {
		w.Header().Set("Connection", "close")
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Time: time.Now()}
	if at, ok := s.accepted.Load(r.RemoteAddr); ok {
		req.ConnAccepted = at.(time.Time)
	}
	body, err := readBody(r)
	if err != nil {
		return // the client went away
	}
	req.Size = len(body)
	isChat := req.Path == chatPath && req.Method == http.MethodPost
	var parseErr, invalid error
	if isChat {
		req.Chat, parseErr = parseChat(body)
	}
	s.record(&req, body)
	if isChat && parseErr == nil {
		invalid = s.check(&req)
	}

	switch {
	case isChat && parseErr != nil:
		writeError(w, http.StatusBadRequest, "fakellm: request body is not valid JSON: "+parseErr.Error(), "invalid_request_error")
	case isChat && invalid != nil:
		writeError(w, http.StatusBadRequest, "fakellm: invalid messages: "+invalid.Error(), "invalid_request_error")
	case isChat:
		rep := s.next(&req)
		s.answer(w, r, &req, &rep)
	case req.Path == chatPath:
		writeError(w, http.StatusMethodNotAllowed, "fakellm: use POST for "+chatPath, "invalid_request_error")
	case req.Path == modelsPath && req.Method == http.MethodGet:
		s.writeModels(w, "")
	case strings.HasPrefix(req.Path, modelsPath+"/") && req.Method == http.MethodGet:
		s.writeModels(w, strings.TrimPrefix(req.Path, modelsPath+"/"))
	default:
		writeError(w, http.StatusNotFound, "fakellm: unknown route "+req.Method+" "+req.Path, "invalid_request_error")
	}
}

// copyBufs are the buffers readBody reads through.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readBody reads the request body into a string, in one allocation when
// its length is known. Large fresh allocations are what a request costs
// most here, so the body is read straight into the string the parser
// reads and the messages' texts point into, and it is copied to
// Request.Body only when it is recorded.
func readBody(r *http.Request) (string, error) {
	var b strings.Builder
	if n := r.ContentLength; n > 0 && n <= 64<<20 {
		b.Grow(int(n))
	}
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	if _, err := io.CopyBuffer(&b, r.Body, *buf); err != nil {
		return "", err
	}
	return b.String(), nil
}

// record appends req to the log, with body and messages unless so
// configured, and calls the OnRequest hook.
func (s *Server) record(req *Request, body string) {
	s.mu.Lock()
	keep, hook := !s.noBodies, s.onRequest
	s.mu.Unlock()
	rec := *req
	if keep {
		req.Body = []byte(body)
		rec.Body = req.Body
	} else if rec.Chat != nil {
		c := *rec.Chat
		c.Messages = nil
		rec.Chat = &c
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	if hook != nil {
		hook(req)
	}
}

// next takes the reply to req from the queue or the responder.
func (s *Server) next(req *Request) Reply {
	s.mu.Lock()
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue[0] = Reply{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return rep
	}
	f := s.responder
	s.mu.Unlock()
	if f == nil {
		return Text("ok")
	}
	return f(req)
}

// model is the model an answer to req names.
func (s *Server) model(req *Request) string {
	if req.Chat != nil && req.Chat.Model != "" {
		return req.Chat.Model
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.models) > 0 {
		return s.models[0]
	}
	return DefaultModel
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// writeModels answers GET /v1/models, or GET /v1/models/{id} if id is set.
func (s *Server) writeModels(w http.ResponseWriter, id string) {
	s.mu.Lock()
	ids := s.models
	s.mu.Unlock()
	list := struct {
		Object string      `json:"object"`
		Data   []wireModel `json:"data"`
	}{Object: "list", Data: []wireModel{}}
	for _, m := range ids {
		wm := wireModel{ID: m, Object: "model", OwnedBy: "fakellm"}
		if id == m {
			writeJSON(w, http.StatusOK, wm)
			return
		}
		list.Data = append(list.Data, wm)
	}
	if id != "" {
		writeError(w, http.StatusNotFound, "fakellm: the model '"+id+"' does not exist", "invalid_request_error")
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own wire types always marshal
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// writeError answers with an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, msg, typ string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(status, msg, typ))
}

// errorBody is an OpenAI-style error object.
func errorBody(status int, msg, typ string) []byte {
	var code any
	if status == http.StatusTooManyRequests {
		code = "rate_limit_exceeded"
	}
	data, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code,
	}})
	return data
}

// errorType is the OpenAI error type for an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	case status >= 400:
		return "invalid_request_error"
	default:
		return "api_error"
	}
}
