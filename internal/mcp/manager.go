package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/tools"
)

// Options configure a Manager.
type Options struct {
	// Home is $MX_CLAW_HOME: logs go to its logs/, state to its mcp/.
	Home string
	// Version is mx-claw's version, told to servers.
	Version string
	// Environ is mx-claw's environment, in os.Environ() form; os.Environ
	// if nil. Servers get only its allow-listed part (see package doc).
	Environ func() []string
	// Reserved reports the variables of the secret chain (the providers'
	// API key variables); a project's entry may not read them with
	// ${VAR}. MX_CLAW_* variables are always reserved.
	Reserved func(name string) bool
	// HTTP is the round tripper of HTTP servers' connections;
	// http.DefaultTransport if nil.
	HTTP http.RoundTripper
	// Logger receives the SDK's diagnostics; discarded if nil.
	Logger *slog.Logger
}

// Manager runs the MCP servers of a process: one connection per server
// entry and workspace, shared by the sessions of that workspace, started
// when needed and stopped by Close. It is safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	conns  map[string]*conn
	closed bool
}

// NewManager returns a Manager; it starts nothing.
func NewManager(opts Options) *Manager {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Manager{opts: opts, log: log, conns: make(map[string]*conn)}
}

func (m *Manager) environ() []string {
	if m.opts.Environ != nil {
		return m.opts.Environ()
	}
	return os.Environ()
}

func (m *Manager) httpBase() http.RoundTripper {
	if m.opts.HTTP != nil {
		return m.opts.HTTP
	}
	return http.DefaultTransport
}

// refuse says why a project's entry may not read the variable name, or "".
func (m *Manager) refuse(name string) string {
	if strings.HasPrefix(strings.ToUpper(name), "MX_CLAW_") || m.opts.Reserved != nil && m.opts.Reserved(name) {
		return "a project's server never gets mx-claw's own keys; define the server in your settings.json to pass it"
	}
	return ""
}

// conn returns the connection of server s in workspace, making it.
func (m *Manager) conn(workspace string, s *Server) (*conn, error) {
	key := strings.Join([]string{workspace, string(s.Source), s.Name, s.Hash()}, "\x00")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	c, ok := m.conns[key]
	if !ok {
		c = newConn(m, s, workspace)
		m.conns[key] = c
	}
	return c, nil
}

// Close stops every server and refuses new work.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	conns := m.conns
	m.conns = map[string]*conn{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
	return nil
}

// Running reports whether workspace's server s has a live connection,
// and the pid of a stdio server's process (tests, `mcp list`).
func (m *Manager) Running(workspace string, s *Server) (bool, int) {
	c, err := m.conn(workspace, s)
	if err != nil {
		return false, 0
	}
	return c.running()
}

// List starts the server s of workspace if needed and returns its tools as
// the model would be offered them, with a problem for each tool it leaves
// out (a schema mx-claw cannot validate).
func (m *Manager) List(ctx context.Context, workspace string, s *Server, set Settings) ([]ToolSpec, []string, error) {
	c, err := m.conn(workspace, s)
	if err != nil {
		return nil, nil, err
	}
	listed, err := c.list(ctx, set)
	if err != nil {
		return nil, nil, err
	}
	specs, problems := toSpecs(s.Name, listed)
	if err := writeList(cacheFile(m.opts.Home, s), specs); err != nil {
		m.log.Warn("cache MCP tool list", "server", s.Name, "err", err)
	}
	return specs, problems, nil
}

// toSpecs turns a server's listing into specs, leaving out (and naming)
// tools whose schema the registry would refuse.
func toSpecs(server string, listed []*sdk.Tool) ([]ToolSpec, []string) {
	var specs []ToolSpec
	var problems []string
	seen := map[string]bool{}
	for _, t := range listed {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			problems = append(problems, fmt.Sprintf("tool %q of MCP server %q has no usable input schema; it is left out", t.Name, server))
			continue
		}
		sp := ToolSpec{Server: server, Tool: t.Name, Name: ToolName(server, t.Name), Description: t.Description, Schema: schema}
		if t.Annotations != nil {
			sp.ReadOnlyHint = t.Annotations.ReadOnlyHint
		}
		if seen[sp.Name] {
			problems = append(problems, fmt.Sprintf("tool %q of MCP server %q has the same name as another once made safe (%s); it is left out", t.Name, server, sp.Name))
			continue
		}
		if err := tools.CheckTool(newTool(sp, Settings{}, tools.RiskExecute)); err != nil {
			problems = append(problems, fmt.Sprintf("tool %q of MCP server %q is left out: %v", t.Name, server, err))
			continue
		}
		seen[sp.Name] = true
		specs = append(specs, sp)
	}
	return specs, problems
}

// Call calls a tool of server s in workspace directly (`mcp test`, tests).
func (m *Manager) Call(ctx context.Context, workspace string, s *Server, set Settings, tool string, args json.RawMessage) (tools.Result, error) {
	c, err := m.conn(workspace, s)
	if err != nil {
		return tools.Result{}, err
	}
	t := newTool(ToolSpec{Server: s.Name, Tool: tool, Name: ToolName(s.Name, tool)}, set, tools.RiskExecute)
	t.conn = c
	return t.Run(ctx, nil, args)
}

// SessionRequest asks for the MCP tools of a session.
type SessionRequest struct {
	SessionID string
	Workspace string
	// First says this is the session's first turn: its tool list is
	// made now. Otherwise the list frozen at the first turn is used, and
	// a session whose first turn froze none gets none.
	First bool
	// Config is the workspace's configuration (see Load).
	Config *Config
}

// SessionTools returns the MCP tools of a session, and warnings for the
// user. At the session's first turn it lists the servers' tools (starting
// them, unless a lazy start finds an earlier listing of the same entry)
// and freezes the list; later it reads the frozen list. A tool whose
// server is no longer configured or allowed stays in the list, and its
// calls fail saying so. With Settings.Startup "session" every server is
// started now. It fails only when the frozen list cannot be read or
// written.
func (m *Manager) SessionTools(ctx context.Context, req SessionRequest) ([]tools.Tool, []string, error) {
	set := req.Config.Settings
	var warnings []string
	for _, p := range req.Config.Problems {
		warnings = append(warnings, p.Error())
	}
	path, err := sessionFile(m.opts.Home, req.SessionID)
	if err != nil {
		return nil, warnings, err
	}
	specs, frozen, err := readList(path)
	if err != nil {
		return nil, warnings, fmt.Errorf("read the session's MCP tool list: %w", err)
	}
	started := map[string]bool{}
	if !frozen {
		if !req.First || len(req.Config.Servers) == 0 {
			return nil, warnings, nil
		}
		var w []string
		specs, started, w = m.listAll(ctx, req.Workspace, req.Config.Servers, set)
		warnings = append(warnings, w...)
		if err := writeList(path, specs); err != nil {
			return nil, warnings, fmt.Errorf("freeze the session's MCP tool list: %w", err)
		}
	}
	var out []tools.Tool
	used := map[string]*Server{}
	for _, sp := range specs {
		risk := tools.RiskExecute
		if sp.ReadOnlyHint && set.TrustsReadOnly(sp.Server) {
			risk = tools.RiskRead
		}
		t := newTool(sp, set, risk)
		if s := req.Config.Find(sp.Server); s != nil {
			if t.conn, err = m.conn(req.Workspace, s); err != nil {
				return nil, warnings, err
			}
			used[s.Name] = s
		} else {
			t.unavailable = fmt.Sprintf("MCP server %q is no longer configured or allowed for this workspace; "+
				"its tools stay listed for the rest of the session but cannot be called", sp.Server)
		}
		out = append(out, t)
	}
	if frozen {
		for _, s := range req.Config.Servers {
			if s.Source == SourceClient && used[s.Name] == nil {
				warnings = append(warnings, fmt.Sprintf("MCP server %q that the editor passed is not used: this session's tools "+
					"were fixed at its first turn, without it; start a new session to use it", s.Name))
			}
		}
	}
	if set.Startup == StartupSession {
		warnings = append(warnings, m.startAll(ctx, req.Workspace, used, started, set)...)
	}
	return out, warnings, nil
}

// listAll lists the tools of every server at once: from the last listing
// of the entry when starting is lazy and there is one, else by starting
// it. It returns the specs in server order, the servers it started, and a
// warning for each server or tool left out.
func (m *Manager) listAll(ctx context.Context, workspace string, servers []*Server, set Settings) ([]ToolSpec, map[string]bool, []string) {
	type listing struct {
		specs    []ToolSpec
		started  bool
		problems []string
	}
	res := make([]listing, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if set.Startup == StartupLazy {
			if cached, ok, err := readList(cacheFile(m.opts.Home, s)); err == nil && ok {
				res[i].specs = cached
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			specs, problems, err := m.List(ctx, workspace, s, set)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%v; its tools are not available in this session", err))
			}
			res[i] = listing{specs: specs, started: err == nil, problems: problems}
		}()
	}
	wg.Wait()
	var specs []ToolSpec
	var warnings []string
	started := map[string]bool{}
	names := map[string]bool{}
	for i, r := range res {
		warnings = append(warnings, r.problems...)
		started[servers[i].Name] = r.started
		for _, sp := range r.specs {
			if names[sp.Name] {
				warnings = append(warnings, fmt.Sprintf("tool %q of MCP server %q is left out: another server's tool has the name %s", sp.Tool, sp.Server, sp.Name))
				continue
			}
			names[sp.Name] = true
			specs = append(specs, sp)
		}
	}
	return specs, started, warnings
}

// startAll starts the servers not started yet, at once, and warns about
// those that do not start.
func (m *Manager) startAll(ctx context.Context, workspace string, servers map[string]*Server, started map[string]bool, set Settings) []string {
	var mu sync.Mutex
	var warnings []string
	var wg sync.WaitGroup
	for name, s := range servers {
		if started[name] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := m.conn(workspace, s)
			if err == nil {
				_, err = c.session(ctx, set)
			}
			if err != nil && !errors.Is(err, ErrClosed) {
				mu.Lock()
				warnings = append(warnings, fmt.Sprintf("%v; it will be tried again when one of its tools is called", err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return warnings
}
