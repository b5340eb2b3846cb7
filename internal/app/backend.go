package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/agent"
	"github.com/mx-claw/mx-claw/internal/modelcmd"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Backend serves the interactive UI (it implements tui.Backend) for one
// workspace of an App: sessions, turns that wait for approvals, answers,
// cancellation, queued messages, permissions and the /model commands.
// It is safe for concurrent use.
type Backend struct {
	a  *App
	ws string

	mu sync.Mutex
	// model is the model asked for on the command line (--model); it is
	// given to new sessions and to the next turn of a resumed one.
	model string
	// startMode is the permission mode the REPL started in.
	startMode string
	// ran are the sessions that ran a turn, in order, for EndSessions.
	ran []string

	cmds commandCache // the workspace's custom commands (backend_ext.go)
}

// NewBackend returns the UI's backend for a workspace; model, if set, is
// the model chosen on the command line.
func NewBackend(a *App, workspace, model string) *Backend {
	b := &Backend{a: a, ws: workspace, model: model}
	b.startMode = b.Mode()
	return b
}

// Workspace returns the workspace directory.
func (b *Backend) Workspace() string { return b.ws }

// NewSession creates an idle session on the chosen model, else the
// default one.
func (b *Backend) NewSession(ctx context.Context) (protocol.Session, error) {
	b.mu.Lock()
	id := b.model
	b.mu.Unlock()
	m, err := b.a.ResolveModel(id)
	if err != nil {
		return protocol.Session{}, err
	}
	s, err := b.a.Core.CreateSession(ctx, b.ws, m.ID, nil)
	if err != nil {
		return protocol.Session{}, err
	}
	return *s, nil
}

// Latest returns the workspace's most recent session, or nil if it has
// none.
func (b *Backend) Latest(ctx context.Context) (*protocol.Session, error) {
	list, err := b.ListSessions(ctx, 1)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// ResumeSession returns a stored session and its stored events, from
// which the UI shows its history as it was shown live.
func (b *Backend) ResumeSession(ctx context.Context, id string) (protocol.Session, []protocol.Event, error) {
	s, err := b.a.Store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return protocol.Session{}, nil, fmt.Errorf("session %s does not exist; /sessions lists this workspace's sessions", id)
	}
	if err != nil {
		return protocol.Session{}, nil, err
	}
	evs, err := b.a.Store.Events(ctx, id, 0, 0)
	if err != nil {
		return protocol.Session{}, nil, err
	}
	b.mu.Lock()
	if b.model != "" {
		s.Model = b.model
	}
	b.mu.Unlock()
	return *s, evs, nil
}

// ListSessions returns the workspace's sessions, most recent first.
func (b *Backend) ListSessions(ctx context.Context, limit int) ([]protocol.Session, error) {
	return b.a.Store.ListSessions(ctx, store.ListOptions{Workspace: b.ws, Limit: limit})
}

// Run runs a turn whose approvals wait for Answer, then the messages
// queued meanwhile. An empty input sends only the queued messages.
func (b *Backend) Run(ctx context.Context, sessionID, input string, sink func(protocol.Event)) error {
	b.mu.Lock()
	model := b.model
	b.mu.Unlock()
	b.noteRan(sessionID)
	req := agent.TurnRequest{SessionID: sessionID, Input: input, Model: model, OnAsk: agent.AskWait, Budget: b.a.Budget()}
	if input == "" {
		// The queued messages leave the queue when the turn stores them.
		req.SendQueued = true
		return b.a.Core.Run(ctx, req, sink)
	}
	// "/name args" typed for a custom command runs the command's turn.
	if err := b.expandCommand(ctx, &req, sink); err != nil {
		return err
	}
	return b.a.Core.Run(ctx, req, sink)
}

// noteRan remembers that a session ran a turn, for EndSessions.
func (b *Backend) noteRan(sessionID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !slices.Contains(b.ran, sessionID) {
		b.ran = append(b.ran, sessionID)
	}
}

// Continue runs a turn on the transcript as it is (after the step budget
// stopped one, or to retry a failed request), then the queued messages.
func (b *Backend) Continue(ctx context.Context, sessionID string, sink func(protocol.Event)) error {
	b.mu.Lock()
	model := b.model
	if !slices.Contains(b.ran, sessionID) {
		b.ran = append(b.ran, sessionID)
	}
	b.mu.Unlock()
	return b.a.Core.Continue(ctx, agent.ContinueRequest{SessionID: sessionID, Model: model, OnAsk: agent.AskWait,
		Budget: b.a.Budget()}, sink)
}

// EndSessions runs the SessionEnd hooks of the sessions that ran a turn,
// when the user leaves the UI (reason "prompt_input_exit").
func (b *Backend) EndSessions(ctx context.Context, reason string) {
	b.mu.Lock()
	ran := slices.Clone(b.ran)
	b.mu.Unlock()
	for _, id := range ran {
		_ = b.a.Core.EndSession(ctx, id, reason, nil)
	}
}

// Compact summarises the session's older messages now (/compact); false
// and no error means there was nothing to compact yet.
func (b *Backend) Compact(ctx context.Context, sessionID, instructions string, sink func(protocol.Event)) (bool, error) {
	err := b.a.Core.Compact(ctx, sessionID, instructions, sink)
	if errors.Is(err, agent.ErrNothingToCompact) {
		return false, nil
	}
	return err == nil, err
}

// Enqueue queues a message for the session's running turn.
func (b *Backend) Enqueue(ctx context.Context, sessionID, input string) (protocol.QueuedInput, error) {
	return b.a.Core.Enqueue(ctx, sessionID, input, nil)
}

// QueuedInputs lists the session's queued messages, oldest first.
func (b *Backend) QueuedInputs(ctx context.Context, sessionID string) ([]protocol.QueuedInput, error) {
	return b.a.Core.QueuedInputs(ctx, sessionID)
}

// RemoveQueued takes a queued message out of the queue (to edit it, or
// drop it) and returns it; an error wrapping store.ErrNotFound means it
// was sent already.
func (b *Backend) RemoveQueued(ctx context.Context, sessionID string, id int64) (protocol.QueuedInput, error) {
	return b.a.Core.RemoveQueued(ctx, sessionID, id, nil)
}

// EditQueued changes the text of a queued message in place; an error
// wrapping store.ErrNotFound means it was sent already.
func (b *Backend) EditQueued(ctx context.Context, sessionID string, id int64, text string) (protocol.QueuedInput, error) {
	return b.a.Core.EditQueued(ctx, sessionID, id, text, nil)
}

// Answer answers a pending approval.
func (b *Backend) Answer(ctx context.Context, r protocol.ResolveApproval) error {
	return b.a.Core.Answer(ctx, agent.ResolveRequest{SessionID: r.SessionID, RequestID: r.RequestID,
		Approve: r.Approve, Scope: r.Scope, Feedback: r.Feedback}, nil)
}

// Cancel cancels the session's running turn.
func (b *Backend) Cancel(sessionID string) bool { return b.a.Core.Cancel(sessionID) }

// Mode returns the permission mode of the workspace's turns.
func (b *Backend) Mode() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p, err := b.a.policy(ctx, &protocol.Session{Workspace: b.ws})
	if err != nil {
		if b.a.opts.Mode != "" {
			return string(b.a.opts.Mode)
		}
		return "default"
	}
	return string(p.Mode())
}

// Permissions describes the mode and the rules of the session's turns.
func (b *Backend) Permissions(ctx context.Context, sessionID string) ([]string, error) {
	s, err := b.a.Store.GetSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	p, err := b.a.policy(ctx, s)
	if err != nil {
		return nil, err
	}
	lines := []string{fmt.Sprintf("mode: %s (%s)", p.Mode(), p.ModeOrigin())}
	rules := p.Rules()
	if len(rules) == 0 {
		lines = append(lines, "no rules: calls that change things are asked about")
	}
	for _, r := range rules {
		lines = append(lines, fmt.Sprintf("  %-5s %s  (%s)", r.List, r.Rule, r.Origin))
	}
	for _, ig := range p.Ignored() {
		lines = append(lines, fmt.Sprintf("  ignored %s in %s: %s", ig.Entry, ig.Origin, ig.Reason))
	}
	return lines, nil
}

// ModelCommand runs a /model command with the same handlers as
// `mx-claw model`, asking the user through prompt (the UI's inline
// prompts). Without a prompter, commands that need to ask fail with a
// hint.
func (b *Backend) ModelCommand(ctx context.Context, sessionID string, args []string, prompt modelcmd.Prompter) (string, string, error) {
	var out bytes.Buffer
	sess := &uiSession{b: b, id: sessionID}
	h := &modelcmd.Handler{Config: b.a.Config, Secrets: b.a.Secrets, Out: &out, Prefix: "/model", Prompt: prompt, Probe: ProbeModel}
	if sessionID != "" {
		s, err := b.a.Store.GetSession(ctx, sessionID)
		if err != nil {
			return "", "", err
		}
		sess.model = s.Model
		b.mu.Lock()
		if b.model != "" {
			sess.model = b.model
		}
		b.mu.Unlock()
		h.Session = sess
	}
	err := h.Run(ctx, args)
	return out.String(), sess.model, err
}

// uiSession is the session whose model /model changes.
type uiSession struct {
	b     *Backend
	id    string
	model string
}

// Model returns the session's model.
func (s *uiSession) Model() string { return s.model }

// SetModel stores the session's new model; a --model choice no longer
// overrides it.
func (s *uiSession) SetModel(ctx context.Context, id string) error {
	cur, err := s.b.a.Store.GetSession(ctx, s.id)
	if err != nil {
		return err
	}
	cur.Model = id
	if err := s.b.a.Store.UpdateSession(ctx, cur); err != nil {
		return err
	}
	s.model = id
	s.b.mu.Lock()
	s.b.model = ""
	s.b.mu.Unlock()
	return nil
}
