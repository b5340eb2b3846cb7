package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/app"
)

// Defaults of Options.
const (
	DefaultHeartbeat    = 15 * time.Second
	DefaultPollInterval = 250 * time.Millisecond
	DefaultBuffer       = 1024
	DefaultWriteTimeout = 30 * time.Second
	DefaultFlushDelay   = 2 * time.Millisecond
)

// DefaultCSP is the Content-Security-Policy of the panel's files: scripts,
// styles and connections only from the server itself, no inline script,
// no framing.
const DefaultCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Options configure a Server. App is required.
type Options struct {
	App *app.App
	// Token is the bearer token; a random one if empty (see Token()).
	Token string
	// AllowRemote accepts any Host header with the server's port, for a
	// server bound to a non-loopback address (the token still guards
	// every route).
	AllowRemote bool
	// Web holds the panel's files, served at /; nil serves a page that
	// says the panel is not built in.
	Web fs.FS
	// CSP is the Content-Security-Policy sent with the panel's files;
	// DefaultCSP if empty.
	CSP string
	// HeartbeatInterval is how long a quiet event stream waits before it
	// sends stream.heartbeat; DefaultHeartbeat if zero.
	HeartbeatInterval time.Duration
	// PollInterval is how often the store is read for events another
	// process stored; DefaultPollInterval if zero.
	PollInterval time.Duration
	// Buffer is the number of live events a stream may fall behind by
	// before it is dropped (and catches up from the store);
	// DefaultBuffer if zero.
	Buffer int
	// WriteTimeout bounds one write to an event stream's client; a
	// client that takes longer is disconnected. DefaultWriteTimeout if
	// zero.
	WriteTimeout time.Duration
	// FlushDelay is how long an event stream waits for more events
	// before it flushes what it wrote: bursts of deltas then cost a few
	// writes instead of one each. DefaultFlushDelay if zero; negative
	// flushes at once.
	FlushDelay time.Duration
	// Logger receives diagnostics; discarded if nil.
	Logger *slog.Logger
}

// Server is the local server. Build it with New, serve its Handler (or
// call Serve), and end it with Shutdown.
type Server struct {
	opts      Options
	app       *app.App
	driver    *app.Driver // per-session permission modes
	log       *slog.Logger
	token     string
	tokenHash [32]byte
	handler   http.Handler

	// ctx is the parent of every turn the server runs; cancel ends them
	// all (Shutdown).
	ctx    context.Context
	cancel context.CancelFunc
	turns  sync.WaitGroup

	feeds *feeds

	mu       sync.Mutex
	runners  map[string]*runner // by session id
	watching map[string]bool    // sessions waiting for another process's lease
	stopping bool
	// closing is closed when the streams must end (Shutdown).
	closing    chan struct{}
	http       *http.Server
	pollerDone chan struct{}
}

// New returns a Server for opts.App.
func New(opts Options) (*Server, error) {
	if opts.App == nil {
		return nil, errors.New("server: App is required")
	}
	if opts.Token == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		opts.Token = hex.EncodeToString(b[:])
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = DefaultHeartbeat
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.FlushDelay == 0 {
		opts.FlushDelay = DefaultFlushDelay
	}
	if opts.CSP == "" {
		opts.CSP = DefaultCSP
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts: opts, app: opts.App, log: log, token: opts.Token, tokenHash: sha256.Sum256([]byte(opts.Token)),
		ctx: ctx, cancel: cancel, runners: make(map[string]*runner), watching: make(map[string]bool),
		closing: make(chan struct{}), pollerDone: make(chan struct{}),
	}
	s.driver = app.NewDriver(opts.App, "")
	s.feeds = newFeeds(opts.App.Store, opts.Buffer, log)
	s.handler = s.guard(s.routes())
	go s.poll()
	go s.followNotices()
	go s.takeOver()
	return s, nil
}

// Token returns the bearer token.
func (s *Server) Token() string { return s.token }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers requests on ln until Shutdown; after Shutdown (even one
// that came before it) it closes ln and returns nil.
func (s *Server) Serve(ln net.Listener) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.mu.Lock()
	if s.stopping {
		// Shutdown came first: it will not stop what starts now.
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.http = hs
	s.mu.Unlock()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown ends the server gracefully: no new turns; the running ones are
// cancelled and wait until they are stored as cancelled (their leases
// released); every event stream gets those events and a final
// stream.closing; then the HTTP server stops. ctx bounds the wait.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		return nil
	}
	s.stopping = true
	hs := s.http
	s.mu.Unlock()

	s.cancel()
	done := make(chan struct{})
	go func() {
		s.turns.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	<-s.pollerDone
	// One last read of the store, so the streams carry everything stored.
	s.feeds.pollAll(context.WithoutCancel(ctx))
	close(s.closing)
	if hs != nil {
		if herr := hs.Shutdown(ctx); herr != nil && err == nil {
			err = herr
		}
	}
	s.feeds.closeAll()
	return err
}

// poll reads the store for events of watched sessions every
// PollInterval, until the server shuts down.
func (s *Server) poll() {
	defer close(s.pollerDone)
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.feeds.pollAll(s.ctx)
			s.checkWatched()
		}
	}
}
