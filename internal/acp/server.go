package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/app"
	"github.com/mx-claw/mx-claw/internal/jsonrpc"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// Options configure Serve.
type Options struct {
	// Driver runs the sessions; required.
	Driver *app.Driver
	// Version is mx-claw's version, told to the client.
	Version string
	// Logger receives diagnostics (never stdout); discarded if nil.
	Logger *slog.Logger
}

// server is one ACP connection's state.
type server struct {
	d       *app.Driver
	conn    *jsonrpc.Conn
	log     *slog.Logger
	version string

	mu          sync.Mutex
	initialized bool
	caps        clientCapabilities
	sessions    map[string]*session
}

// session is a session the client opened (session/new or session/load).
type session struct {
	id, cwd string

	mu      sync.Mutex
	running bool // a prompt is being answered
}

// Serve speaks ACP on in and out until in ends or ctx is done. Nothing but
// protocol messages is written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Driver == nil {
		return errors.New("acp: a Driver is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &server{d: opts.Driver, log: log, version: opts.Version, sessions: make(map[string]*session)}
	s.conn = jsonrpc.NewConn(in, out, s.handle, jsonrpc.Options{Logger: log})
	return s.conn.Serve(ctx)
}

// handle dispatches one request or notification.
func (s *server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	s.log.Debug("acp request", "method", req.Method)
	if req.Method == "initialize" {
		return s.initialize(req)
	}
	s.mu.Lock()
	ready := s.initialized
	s.mu.Unlock()
	if !ready {
		return nil, errNotInitialized
	}
	var res any
	var err error
	switch req.Method {
	case "authenticate":
		res, err = s.authenticate(req)
	case "session/new":
		res, err = s.newSession(ctx, req)
	case "session/load":
		res, err = s.loadSession(ctx, req)
	case "session/list":
		res, err = s.listSessions(ctx, req)
	case "session/set_mode":
		res, err = s.setMode(ctx, req)
	case "session/prompt":
		res, err = s.prompt(ctx, req)
	case "session/cancel":
		var p cancelParams
		if err := req.Decode(&p); err != nil {
			return nil, err
		}
		s.d.Cancel(p.SessionID)
		return nil, nil
	default:
		if req.IsNotification() {
			return nil, nil // unknown notifications are ignored
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %s is not supported", req.Method)
	}
	if err != nil {
		s.log.Warn("acp request failed", "method", req.Method, "err", err)
	}
	return res, rpcError(err)
}

func (s *server) initialize(req *jsonrpc.Request) (any, error) {
	var p initializeParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.initialized, s.caps = true, p.ClientCapabilities
	s.mu.Unlock()
	client := "unknown"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("acp initialize", "client", client, "protocolVersion", p.ProtocolVersion,
		"fsRead", p.ClientCapabilities.FS.ReadTextFile, "fsWrite", p.ClientCapabilities.FS.WriteTextFile)
	return initializeResult{
		// Whatever version the client asks for, this is the one spoken.
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession: true,
			// Embedded files are inlined; images go to a model that
			// reads them (images.go); audio has nowhere to go.
			PromptCapabilities:  promptCapabilities{EmbeddedContext: true, Image: s.d.ReadsImages()},
			SessionCapabilities: sessionCapabilities{List: &struct{}{}},
			// Stdio servers are always supported; these say HTTP ones are.
			MCPCapabilities: mcpCapabilities{HTTP: true, SSE: true},
		},
		AuthMethods: []authMethod{{ID: authMethodModel, Name: "Configure a model",
			Description: "Run `mx-claw model` (or `mx-claw model configure`) in a terminal to choose a provider and give its API key, then authenticate again."}},
		AgentInfo: implementation{Name: "mx-claw", Title: "mx-claw", Version: s.version},
	}, nil
}

// authMethodModel is the one way to "authenticate": configure a model in
// a terminal, where the key can be typed hidden, never through the editor.
const authMethodModel = "mx-claw-model"

func (s *server) authenticate(req *jsonrpc.Request) (any, error) {
	var p authenticateParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	if p.MethodID != authMethodModel {
		return nil, jsonrpc.InvalidParams("unknown auth method %q; the only one is %q", p.MethodID, authMethodModel)
	}
	return nil, s.d.Ready()
}

// workspaceDir checks a cwd the client sent: absolute, an existing
// directory; it returns it without symlinks.
func workspaceDir(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", jsonrpc.InvalidParams("cwd %q is not an absolute path", cwd)
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return "", jsonrpc.InvalidParams("cwd %s does not exist", cwd)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", jsonrpc.InvalidParams("cwd %s is not a directory", cwd)
	}
	return real, nil
}

func (s *server) newSession(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p newSessionParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	cwd, err := workspaceDir(p.CWD)
	if err != nil {
		return nil, err
	}
	sess, err := s.d.NewSession(ctx, cwd, nil)
	if err != nil {
		return nil, err
	}
	s.open(sess, p.MCPServers)
	modes, err := s.modes(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	return newSessionResult{SessionID: sess.ID, Modes: modes}, nil
}

// loadSession replays a stored session's events as updates, then answers.
func (s *server) loadSession(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p loadSessionParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	sess, err := s.d.Session(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	evs, err := s.d.Events(ctx, sess.ID, 0)
	if err != nil {
		return nil, err
	}
	m := newMapper(sess.Workspace, true)
	for _, e := range evs {
		for _, u := range m.updates(e) {
			s.notify(sess.ID, u)
		}
	}
	s.open(sess, p.MCPServers)
	modes, err := s.modes(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	return loadSessionResult{Modes: modes}, nil
}

// open registers a session of this connection and, if the client offers
// its file system, routes the session's file tools through it.
func (s *server) open(sess protocol.Session, mcp []mcpServer) {
	s.mu.Lock()
	caps := s.caps
	s.sessions[sess.ID] = &session{id: sess.ID, cwd: sess.Workspace}
	s.mu.Unlock()
	if caps.FS.ReadTextFile || caps.FS.WriteTextFile {
		s.d.SetEditor(sess.ID, &clientFiles{conn: s.conn, sessionID: sess.ID,
			read: caps.FS.ReadTextFile, write: caps.FS.WriteTextFile})
	}
	s.acceptMCP(sess.ID, mcp)
}

// acceptMCP gives a session the MCP servers the client passed; the app's
// MCP manager starts them (see app.Driver.UseMCPServers). Entries that
// cannot be used are logged.
func (s *server) acceptMCP(sessionID string, servers []mcpServer) {
	list := make([]app.ClientMCPServer, 0, len(servers))
	for _, m := range servers {
		list = append(list, app.ClientMCPServer{Name: m.Name, Type: m.Type, Command: m.Command, Args: m.Args,
			Env: pairs(m.Env), URL: m.URL, Headers: pairs(m.Headers)})
		s.log.Info("client MCP server", "session", sessionID, "name", m.Name, "type", m.Type)
	}
	for _, w := range s.d.UseMCPServers(sessionID, list) {
		s.log.Warn("client MCP server refused", "session", sessionID, "why", w)
	}
}

// pairs turns ACP's name/value list into a map; a later name wins.
func pairs(list []nameValue) map[string]string {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]string, len(list))
	for _, nv := range list {
		m[nv.Name] = nv.Value
	}
	return m
}

func (s *server) session(id string) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeNotFound,
			Message: fmt.Sprintf("session %s is not open on this connection; create it with session/new or open it with session/load", id)}
	}
	return sess, nil
}

func (s *server) listSessions(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p listSessionsParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	ws := ""
	if p.CWD != "" {
		if real, err := filepath.EvalSymlinks(p.CWD); err == nil {
			ws = real
		} else {
			ws = p.CWD
		}
	}
	list, err := s.d.Sessions(ctx, ws, 0)
	if err != nil {
		return nil, err
	}
	res := listSessionsResult{Sessions: make([]sessionInfo, 0, len(list))}
	for _, x := range list {
		res.Sessions = append(res.Sessions, sessionInfo{SessionID: x.ID, CWD: x.Workspace, Title: x.Title,
			UpdatedAt: x.UpdatedAt.UTC().Format(time.RFC3339)})
	}
	return res, nil
}

// modes is the session's mode state for session/new and session/load.
func (s *server) modes(ctx context.Context, sessionID string) (*modeState, error) {
	cur, err := s.d.Mode(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	st := &modeState{CurrentModeID: cur}
	for _, m := range app.Modes() {
		st.AvailableModes = append(st.AvailableModes, sessionMode{ID: m.ID, Name: m.Name, Description: m.Description})
	}
	return st, nil
}

func (s *server) setMode(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p setModeParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	if _, err := s.session(p.SessionID); err != nil {
		return nil, err
	}
	if err := s.d.SetMode(ctx, p.SessionID, p.ModeID); err != nil {
		if errors.Is(err, app.ErrUnknownSession) {
			return nil, err
		}
		return nil, jsonrpc.InvalidParams("%v", err)
	}
	s.notify(p.SessionID, sessionUpdate{SessionUpdate: "current_mode_update", CurrentModeID: p.ModeID})
	return nil, nil
}

// prompt runs one turn and answers with its stop reason once every update
// of the turn has been sent.
func (s *server) prompt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p promptParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	sess, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	input, imgs, err := s.promptContent(ctx, sess.id, p.Prompt)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	if sess.running {
		sess.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "a prompt is already running on session %s", sess.id)
	}
	sess.running = true
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		sess.running = false
		sess.mu.Unlock()
	}()
	m := newMapper(sess.cwd, false)
	out := s.d.Run(ctx, app.Turn{SessionID: sess.id, Input: input, Images: imgs, Approver: s.approver(sess)}, func(e protocol.Event) {
		if e.Type == protocol.EventWarning || e.Type == protocol.EventHookWarning {
			s.log.Info("turn warning", "session", sess.id, "text", e.Text)
		}
		for _, u := range m.updates(e) {
			s.notify(sess.id, u)
		}
	})
	switch out.Stop {
	case app.StopEndTurn:
		return promptResult{StopReason: "end_turn"}, nil
	case app.StopMaxTokens:
		return promptResult{StopReason: "max_tokens"}, nil
	case app.StopMaxSteps:
		return promptResult{StopReason: "max_turn_requests"}, nil
	case app.StopRefusal:
		return promptResult{StopReason: "refusal"}, nil
	case app.StopCancelled:
		return promptResult{StopReason: "cancelled"}, nil
	}
	return nil, out.Err
}

// promptText turns a prompt's content blocks into the user's message:
// text as it is, links as Markdown links, embedded text files inline with
// their URI. Image blocks are returned apart (images.go); audio is
// refused (the initialize answer says so).
func promptText(blocks []contentBlock) (string, []protocol.Image, error) {
	var b strings.Builder
	var imgs []protocol.Image
	for _, c := range blocks {
		switch c.Type {
		case "image":
			imgs = append(imgs, protocol.Image{MIME: c.MimeType, Data: c.Data, Name: imageName(c.URI)})
			continue
		case "text":
			b.WriteString(c.Text)
		case "resource_link":
			name := c.Name
			if name == "" {
				name = c.URI
			}
			fmt.Fprintf(&b, "[%s](%s)", name, c.URI)
		case "resource":
			if c.Resource == nil {
				return "", nil, jsonrpc.InvalidParams("a resource block without its resource")
			}
			if c.Resource.Blob != "" && c.Resource.Text == "" {
				fmt.Fprintf(&b, "\n[binary resource %s left out]\n", c.Resource.URI)
				continue
			}
			fmt.Fprintf(&b, "\n<context ref=%q>\n%s\n</context>\n", c.Resource.URI, c.Resource.Text)
		case "audio":
			return "", nil, jsonrpc.InvalidParams("mx-claw takes no %s in prompts (promptCapabilities.%s is false)", c.Type, c.Type)
		default:
			return "", nil, jsonrpc.InvalidParams("unknown content block type %q", c.Type)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", nil, jsonrpc.InvalidParams("the prompt has no text")
	}
	return b.String(), imgs, nil
}

// approver asks the client about a call that needs approval with
// session/request_permission and maps the option chosen onto a decision.
func (s *server) approver(sess *session) app.Approver {
	return func(ctx context.Context, req app.ApprovalRequest) (app.Decision, error) {
		info := describe(req.ToolName, req.Arguments, req.Summary, sess.cwd)
		opts := []permissionOption{{OptionID: "allow_once", Name: "Allow once", Kind: "allow_once"}}
		if req.Rule != "" {
			opts = append(opts, permissionOption{OptionID: "allow_always", Name: "Always allow " + req.Rule + " in this project", Kind: "allow_always"})
		}
		opts = append(opts,
			permissionOption{OptionID: "reject_once", Name: "Reject", Kind: "reject_once"},
			permissionOption{OptionID: "reject_always", Name: "Reject such calls in this session", Kind: "reject_always"})
		p := requestPermissionParams{SessionID: sess.id, Options: opts, ToolCall: toolCall{ToolCallID: req.ToolCallID,
			Title: info.title, Kind: info.kind, Status: "pending", Content: info.content, Locations: info.locations,
			RawInput: req.Arguments}}
		var res requestPermissionResult
		if err := s.conn.Call(ctx, "session/request_permission", p, &res); err != nil {
			return "", err
		}
		if res.Outcome.Outcome == "cancelled" {
			return app.DecisionCancel, nil
		}
		switch res.Outcome.OptionID {
		case "allow_once":
			return app.DecisionAllowOnce, nil
		case "allow_always":
			return app.DecisionAllowAlways, nil
		case "reject_once":
			return app.DecisionRejectOnce, nil
		case "reject_always":
			return app.DecisionRejectAlways, nil
		}
		return "", fmt.Errorf("the client chose an unknown option %q", res.Outcome.OptionID)
	}
}

// notify sends one session/update.
func (s *server) notify(sessionID string, u sessionUpdate) {
	if err := s.conn.Notify("session/update", sessionNotification{SessionID: sessionID, Update: u}); err != nil {
		s.log.Warn("send session/update", "session", sessionID, "err", err)
	}
}
