package appserver

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
	// Driver runs the threads; required.
	Driver *app.Driver
	// Version is mx-claw's version, told to the client.
	Version string
	// Logger receives diagnostics (never stdout); discarded if nil.
	Logger *slog.Logger
}

// server is one connection's state.
type server struct {
	d       *app.Driver
	conn    *jsonrpc.Conn
	log     *slog.Logger
	version string

	// turns run on ctx, which ends with the connection; wg waits for them.
	ctx context.Context
	wg  sync.WaitGroup

	mu          sync.Mutex
	initialized bool
}

// Serve speaks the app server's protocol on in and out until in ends or
// ctx is done; then it cancels the turns it started and waits for them.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Driver == nil {
		return errors.New("appserver: a Driver is required")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &server{d: opts.Driver, log: log, version: opts.Version, ctx: ctx}
	s.conn = jsonrpc.NewConn(in, out, s.handle, jsonrpc.Options{Logger: log})
	err := s.conn.Serve(ctx)
	cancel()
	s.wg.Wait()
	return err
}

func (s *server) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method == "initialize" {
		return s.initialize(req)
	}
	if req.Method == "initialized" {
		return nil, nil
	}
	s.mu.Lock()
	ready := s.initialized
	s.mu.Unlock()
	if !ready {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "not initialized: send initialize first")
	}
	var res any
	var err error
	switch req.Method {
	case "thread/start":
		res, err = s.threadStart(ctx, req)
	case "thread/resume":
		res, err = s.threadResume(ctx, req)
	case "thread/list":
		res, err = s.threadList(ctx, req)
	case "thread/read":
		res, err = s.threadRead(ctx, req)
	case "turn/start":
		res, err = s.turnStart(ctx, req)
	case "turn/interrupt":
		res, err = s.turnInterrupt(req)
	default:
		if req.IsNotification() {
			return nil, nil
		}
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %s is not supported", req.Method)
	}
	if err != nil {
		s.log.Warn("app-server request failed", "method", req.Method, "err", err)
	}
	return res, rpcError(err)
}

func (s *server) initialize(req *jsonrpc.Request) (any, error) {
	var p InitializeParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initialized {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "already initialized")
	}
	s.initialized = true
	if p.ClientInfo != nil {
		s.log.Info("app-server initialize", "client", p.ClientInfo.Name, "clientVersion", p.ClientInfo.Version)
	}
	res := InitializeResult{ServerInfo: ServerInfo{Name: "mx-claw", Version: s.version}, ProtocolVersion: ProtocolVersion}
	for _, m := range app.Modes() {
		res.PermissionModes = append(res.PermissionModes, m.ID)
	}
	return res, nil
}

// notify sends an event as its notification.
func (s *server) notify(e protocol.Event) {
	if err := s.conn.Notify(methodOf(e.Type), e); err != nil {
		s.log.Warn("send notification", "type", e.Type, "err", err)
	}
}

func (s *server) threadStart(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p ThreadStartParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	cwd, err := workspaceDir(p.Cwd)
	if err != nil {
		return nil, err
	}
	if p.PermissionMode != "" {
		if err := checkMode(p.PermissionMode); err != nil {
			return nil, err
		}
	}
	// thread/started (the session.created event) goes out before the
	// answer, as in codex.
	sess, err := s.d.NewSession(ctx, cwd, s.notify)
	if err != nil {
		return nil, err
	}
	if p.PermissionMode != "" {
		if err := s.d.SetMode(ctx, sess.ID, p.PermissionMode); err != nil {
			return nil, err
		}
	}
	return s.threadResult(ctx, sess)
}

func (s *server) threadResume(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p ThreadResumeParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	sess, err := s.d.Session(ctx, p.ThreadID)
	if err != nil {
		return nil, err
	}
	if p.PermissionMode != "" {
		if err := s.d.SetMode(ctx, sess.ID, p.PermissionMode); err != nil {
			return nil, jsonrpc.InvalidParams("permissionMode: %v", err)
		}
	}
	if p.AfterSequence != nil {
		evs, err := s.d.Events(ctx, sess.ID, *p.AfterSequence)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			s.notify(e)
		}
	}
	return s.threadResult(ctx, sess)
}

func (s *server) threadResult(ctx context.Context, sess protocol.Session) (ThreadResult, error) {
	t := thread(sess)
	mode, err := s.d.Mode(ctx, sess.ID)
	if err != nil {
		return ThreadResult{}, err
	}
	t.PermissionMode = mode
	return ThreadResult{Thread: t}, nil
}

func (s *server) threadList(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p ThreadListParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	if p.Limit < 0 {
		return nil, jsonrpc.InvalidParams("limit must not be negative")
	}
	ws := p.Cwd
	if ws != "" {
		if real, err := filepath.EvalSymlinks(ws); err == nil {
			ws = real
		}
	}
	list, err := s.d.Sessions(ctx, ws, p.Limit)
	if err != nil {
		return nil, err
	}
	res := ThreadListResult{Data: make([]Thread, 0, len(list))}
	for _, x := range list {
		res.Data = append(res.Data, thread(x))
	}
	return res, nil
}

func (s *server) threadRead(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p ThreadReadParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	sess, err := s.d.Session(ctx, p.ThreadID)
	if err != nil {
		return nil, err
	}
	res := ThreadReadResult{Thread: thread(sess)}
	if p.IncludeMessages {
		if res.Messages, err = s.d.Messages(ctx, sess.ID); err != nil {
			return nil, err
		}
	}
	if p.IncludeEvents {
		if res.Events, err = s.d.Events(ctx, sess.ID, 0); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// turnStart starts a turn and answers once it has started (with its id)
// or has failed to start; the turn goes on after the answer, its events
// sent as notifications.
func (s *server) turnStart(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p TurnStartParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	if _, err := s.d.Session(ctx, p.ThreadID); err != nil {
		return nil, err
	}
	var parts []string
	for _, in := range p.Input {
		if in.Type != "text" {
			return nil, jsonrpc.InvalidParams("input type %q is not supported; send text", in.Type)
		}
		parts = append(parts, in.Text)
	}
	input := strings.Join(parts, "\n")
	if strings.TrimSpace(input) == "" {
		return nil, jsonrpc.InvalidParams("the input is empty")
	}
	started := make(chan string, 1)
	ended := make(chan app.Outcome, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var once sync.Once
		out := s.d.Run(s.ctx, app.Turn{SessionID: p.ThreadID, Input: input, Model: p.Model, Approver: s.approver},
			func(e protocol.Event) {
				s.notify(e)
				if e.Type == protocol.EventTurnStarted {
					once.Do(func() { started <- e.TurnID })
				}
			})
		ended <- out
	}()
	select {
	case id := <-started:
		return TurnStartResult{Turn: Turn{ID: id, Status: "inProgress"}}, nil
	case out := <-ended:
		// It ended before it started: the session is busy, not ready, or
		// waits for an approval stored elsewhere.
		select {
		case id := <-started:
			return TurnStartResult{Turn: Turn{ID: id, Status: "inProgress"}}, nil
		default:
		}
		if out.Err == nil {
			out.Err = errors.New("the turn ended before it started")
		}
		return nil, out.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *server) turnInterrupt(req *jsonrpc.Request) (any, error) {
	var p TurnInterruptParams
	if err := req.Decode(&p); err != nil {
		return nil, err
	}
	if !s.d.Cancel(p.ThreadID) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "thread %s has no running turn here", p.ThreadID)
	}
	return Empty{}, nil
}

// approver asks the client with item/tool/requestApproval.
func (s *server) approver(ctx context.Context, req app.ApprovalRequest) (app.Decision, error) {
	p := ApprovalParams{ThreadID: req.SessionID, TurnID: req.TurnID, RequestID: req.RequestID, ToolCallID: req.ToolCallID,
		ToolName: req.ToolName, Arguments: req.Arguments, Summary: req.Summary, Rule: req.Rule, Reason: req.Reason}
	var res ApprovalResult
	if err := s.conn.Call(ctx, requestApproval, p, &res); err != nil {
		return "", err
	}
	switch res.Decision {
	case "accept":
		return app.DecisionAllowOnce, nil
	case "acceptForSession":
		return app.DecisionAllowSession, nil
	case "acceptAlways":
		return app.DecisionAllowAlways, nil
	case "decline":
		return app.DecisionRejectOnce, nil
	case "declineForSession":
		return app.DecisionRejectAlways, nil
	case "cancel":
		return app.DecisionCancel, nil
	}
	return "", fmt.Errorf("unknown decision %q", res.Decision)
}

// thread describes a session as a thread.
func thread(s protocol.Session) Thread {
	return Thread{ID: s.ID, Title: s.Title, Cwd: s.Workspace, Model: s.Model, Status: s.Status,
		CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339Nano),
		Usage: s.Usage, MessageCount: s.MessageCount}
}

// workspaceDir checks a cwd: absolute, an existing directory; it returns it
// without symlinks.
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

// checkMode refuses an unknown permission mode before anything is stored.
func checkMode(mode string) error {
	for _, m := range app.Modes() {
		if m.ID == mode {
			return nil
		}
	}
	return jsonrpc.InvalidParams("permissionMode %q: want one of default, acceptEdits, plan, bypass", mode)
}

// rpcError gives err the JSON-RPC code the client can act on.
func rpcError(err error) error {
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rpcErr):
		return err
	case errors.Is(err, app.ErrUnknownSession):
		return &jsonrpc.Error{Code: jsonrpc.CodeNotFound, Message: err.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
