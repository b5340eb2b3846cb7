package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/execx"
)

// Defaults of Options.
const (
	DefaultTimeout = 20 * time.Second
	DefaultIdle    = 15 * time.Minute
)

// maxListed caps the diagnostics listed in a note.
const maxListed = 20

// Options configure a Manager.
type Options struct {
	// Servers are the configured servers; Defaults() if nil.
	Servers []ServerConfig
	// Timeout bounds the wait for a file's diagnostics (the first one
	// includes starting the server and its loading the workspace);
	// DefaultTimeout if zero.
	Timeout time.Duration
	// Idle is how long a server may go unused before it is stopped;
	// DefaultIdle if zero.
	Idle time.Duration
	// Environ is the environment servers inherit, filtered through the
	// execx allow-list; os.Environ if nil.
	Environ func() []string
	// Logger receives diagnostics about the servers; discarded if nil.
	Logger *slog.Logger
}

// Manager runs language servers: one per workspace root and server,
// started on first use. It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]*entry // by root + "\x00" + server name
	told    map[string]bool   // session id + server: "no diagnostics" said
	closed  bool
}

// entry is a server being started or running.
type entry struct {
	ready chan struct{} // closed once started (or failed)
	srv   *server
	err   error
	// mu serialises the checks of one server: one document state.
	mu sync.Mutex
}

// NewManager returns a Manager; nothing starts until a file is checked.
func NewManager(o Options) *Manager {
	if o.Servers == nil {
		o.Servers = Defaults()
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{opts: o, log: log, servers: map[string]*entry{}, told: map[string]bool{}}
}

// serverFor returns the configured server for a file, by extension.
func (m *Manager) serverFor(path string) (ServerConfig, bool) {
	ext := filepath.Ext(path)
	for _, c := range m.opts.Servers {
		if slices.Contains(c.Extensions, ext) {
			return c, true
		}
	}
	return ServerConfig{}, false
}

// get returns the running server cfg for root, starting it if needed.
func (m *Manager) get(ctx context.Context, root string, cfg ServerConfig) (*entry, error) {
	key := root + "\x00" + cfg.Name
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("language servers are shut down")
	}
	m.stopIdle()
	e, ok := m.servers[key]
	if ok && isClosed(e.ready) && e.srv != nil && !e.srv.alive() {
		// It died: start it again.
		delete(m.servers, key)
		ok = false
	}
	if !ok {
		e = &entry{ready: make(chan struct{})}
		m.servers[key] = e
		m.mu.Unlock()
		env := execx.Env(m.opts.Environ(), execx.DefaultEnvAllow)
		srv, err := start(context.WithoutCancel(ctx), cfg, root, env, m.opts.Timeout)
		if err != nil {
			m.log.Warn("language server", "server", cfg.Name, "root", root, "err", err)
		}
		m.mu.Lock()
		if m.closed && srv != nil {
			go srv.stop()
			srv, err = nil, errors.New("language servers are shut down")
		}
		var ni *NotInstalledError
		if err != nil && !errors.As(err, &ni) {
			// Try again next time; a missing command stays missing.
			delete(m.servers, key)
		}
		e.srv, e.err = srv, err
		close(e.ready)
	}
	m.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e, e.err
}

// stopIdle stops servers unused for longer than Idle; m.mu is held.
func (m *Manager) stopIdle() {
	for key, e := range m.servers {
		if isClosed(e.ready) && e.srv != nil {
			e.srv.mu.Lock()
			idle := time.Since(e.srv.lastUse) > m.opts.Idle
			e.srv.mu.Unlock()
			if idle {
				delete(m.servers, key)
				go e.srv.stop()
			}
		}
	}
}

// fileResult is what a server said about one file.
type fileResult struct {
	path   string
	server string
	diags  []Diagnostic
	ok     bool
}

// diagnose returns the diagnostics of each file that has a server. The
// second result says, once per session and server, why a file got none
// (the server is not installed, or failed to start).
func (m *Manager) diagnose(ctx context.Context, sessionID, root string, files []string) ([]fileResult, []string) {
	var out []fileResult
	var notes []string
	ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()
	for _, f := range files {
		cfg, ok := m.serverFor(f)
		if !ok {
			continue
		}
		e, err := m.get(ctx, root, cfg)
		if err != nil {
			if n := m.tellOnce(sessionID, cfg.Name, err); n != "" {
				notes = append(notes, n)
			}
			continue
		}
		e.mu.Lock()
		diags, ok, err := e.srv.diagnose(ctx, f)
		e.mu.Unlock()
		if err != nil {
			m.log.Warn("diagnostics", "server", cfg.Name, "file", f, "err", err)
			continue
		}
		out = append(out, fileResult{path: f, server: cfg.Name, diags: diags, ok: ok})
	}
	return out, notes
}

// tellOnce returns the note that a session gets no diagnostics from a
// server, the first time only.
func (m *Manager) tellOnce(sessionID, server string, err error) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := sessionID + "\x00" + server
	if m.told[key] || errors.Is(err, context.Canceled) {
		return ""
	}
	m.told[key] = true
	return fmt.Sprintf("(No diagnostics from %s in this session: %v.)", server, err)
}

// Check is the agent's DiagnoseFunc: it takes the diagnostics of files
// (absolute paths under root) before a call changes them, and returns the
// function that, after the call, returns the errors the change brought —
// those not there before, matched by message and not by position, which
// an edit moves — or "". Files without a server are not checked; nil is
// returned when none has one.
func (m *Manager) Check(ctx context.Context, sessionID, root string, files []string) func(context.Context) string {
	var checked []string
	for _, f := range files {
		if _, ok := m.serverFor(f); ok {
			checked = append(checked, f)
		}
	}
	if len(checked) == 0 {
		return nil
	}
	before, notes := m.diagnose(ctx, sessionID, root, checked)
	return func(ctx context.Context) string {
		after, more := m.diagnose(ctx, sessionID, root, checked)
		notes = append(notes, more...)
		return strings.Join(append(compare(root, before, after), notes...), "\n")
	}
}

// compare returns, per file, the errors in after that were not in before,
// and a line for a file whose errors are all gone.
func compare(root string, before, after []fileResult) []string {
	var out []string
	for _, a := range after {
		if !a.ok {
			continue
		}
		seen := map[string]int{}
		hadErrors := false
		for _, b := range before {
			if b.path == a.path && b.ok {
				for _, d := range b.diags {
					if d.IsError() {
						seen[d.key()]++
						hadErrors = true
					}
				}
			}
		}
		var fresh []Diagnostic
		errorsNow := 0
		for _, d := range a.diags {
			if !d.IsError() {
				continue
			}
			errorsNow++
			if seen[d.key()] > 0 {
				seen[d.key()]--
				continue
			}
			fresh = append(fresh, d)
		}
		rel := relPath(root, a.path)
		switch {
		case len(fresh) > 0:
			out = append(out, fmt.Sprintf("%s reports new errors in %s after this change:", a.server, rel))
			out = append(out, list(rel, fresh)...)
		case hadErrors && errorsNow == 0:
			out = append(out, fmt.Sprintf("%s reports no errors in %s now.", a.server, rel))
		}
	}
	return out
}

// list formats diagnostics, at most maxListed of them.
func list(rel string, diags []Diagnostic) []string {
	var out []string
	for i, d := range diags {
		if i == maxListed {
			out = append(out, fmt.Sprintf("… and %d more", len(diags)-maxListed))
			break
		}
		line := fmt.Sprintf("%s:%d:%d: %s%s", rel, d.Line, d.Column, severityName(d.Severity), d.Message)
		if d.Source != "" {
			line += " (" + d.Source + ")"
		}
		out = append(out, line)
	}
	return out
}

func severityName(s int) string {
	switch s {
	case 2:
		return "warning: "
	case 3:
		return "info: "
	case 4:
		return "hint: "
	}
	return ""
}

func relPath(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// Close stops every server and waits for them.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	servers := m.servers
	m.servers = map[string]*entry{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-e.ready
			if e.srv != nil {
				e.srv.stop()
			}
		}()
	}
	wg.Wait()
}
