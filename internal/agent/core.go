package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/checkpoint"
	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/subagent"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// DefaultMaxIterations is the number of model steps a turn may take unless
// the caller or the config (maxIterations) says otherwise. Real tasks take
// dozens to hundreds of steps; the loop detector and the budgets are the
// guards against a model that goes round in circles, not this.
const DefaultMaxIterations = 300

// DefaultMaxParallel bounds the tool calls run at once in a parallel batch.
const DefaultMaxParallel = 8

// Model is a model ready to serve requests.
type Model struct {
	// ID is the model's full id, "provider/model".
	ID string
	// Name is the provider's name for the model, sent in requests.
	Name string
	// Client reaches the model's provider.
	Client llm.Client
}

// ModelResolver finds the model for an id ("provider/model", or "" for the
// configured default). Its errors are configuration errors: an unknown
// model, a provider that is not ready.
type ModelResolver func(id string) (Model, error)

// Options configure a Core. Store, Models and Tools are required.
type Options struct {
	Store  store.Store
	Models ModelResolver
	Tools  *tools.Registry
	// Owner names this process in leases; store.NewOwner() if empty.
	Owner string
	// LeaseTTL is how long a lease lasts between heartbeats;
	// store.DefaultLeaseTTL if zero. The heartbeat renews it every third
	// of that.
	LeaseTTL time.Duration
	// MaxIterations is the default iteration budget of a turn;
	// DefaultMaxIterations if zero.
	MaxIterations int
	// MaxParallel bounds parallel tool calls; DefaultMaxParallel if zero.
	MaxParallel int
	// SystemPrompt, if set, is frozen into each new session as its first
	// message as it is; empty builds the prompt of BuildPrompt, with the
	// session's environment, and keeps the model told of changes to it.
	SystemPrompt string
	// Sandbox describes how a session's commands are confined, for the
	// model; nil tells it there is no sandbox.
	Sandbox func(ctx context.Context, sess *protocol.Session) Sandbox
	// Permissions builds the permission policy of a turn; nil allows
	// every call (the tools' own hard checks still apply).
	Permissions PolicyFunc
	// Hooks returns the hooks of a turn; nil runs none.
	Hooks HooksFunc
	// Commands returns the runner of a turn's shell commands (its
	// sandbox); nil runs them without one.
	Commands CommandsFunc
	// SessionTools, if set, returns a session's tool registry — Tools with
	// the session's own tools added (its MCP servers') — and warnings for
	// the user. It is called at the session's first turn in this process;
	// the registry is kept for the session's later turns here, so the tool
	// list the model sees stays the same (invariant 4). Its error stops
	// the turn as a *ConfigError. Nil gives every session Tools.
	SessionTools func(ctx context.Context, sess *protocol.Session) (*tools.Registry, []string, error)
	// Context returns the context files (AGENTS.md) frozen into a new
	// session at its first turn, with warnings for the user; nil adds none.
	Context func(workspace string) (text string, warnings []string)
	// SessionContext returns the memory and the skill index frozen into
	// a new session's system prompt at its first turn (sessionctx.go);
	// nil adds none.
	SessionContext SessionContextFunc
	// Remember, if set, keeps the requests to remember found in the
	// user's message of a completed turn as candidates a person reviews,
	// and returns them (afterturn.go). typed is the message as the user
	// typed it; msg is the stored one.
	Remember func(ctx context.Context, sess *protocol.Session, msg *protocol.Message, typed string) ([]protocol.MemoryCandidate, error)
	// ProposeSkill, if set, keeps the skill a model wrote (answer) for a
	// completed turn's trajectory, for a person to review; nil turns skill
	// proposals off. An error matching skills.ErrNoProposal or
	// skills.ErrExists says nothing was kept.
	ProposeSkill func(ctx context.Context, tr skills.Trajectory, answer string) (*protocol.SkillProposal, error)
	// MinProposalCalls is how many tool calls a turn needs before a skill
	// is proposed from it; DefaultMinProposalCalls if zero.
	MinProposalCalls int
	// Catalog describes a model: its context window and prices; nil
	// leaves context use and cost unknown.
	Catalog func(modelID string) catalog.Model
	// CompactThreshold is the share of the context window above which the
	// view is compacted before a request; 0 means 0.8.
	CompactThreshold float64
	// Checkpoints saves the workspace before and after each call that may
	// change it, so Undo and Rewind can put files back; nil keeps none.
	Checkpoints *checkpoint.Manager
	// Home is the user's home directory, for "~" in permission rules.
	Home string
	// MaxAnswerBytes, MaxArgumentBytes and MaxStreamedOutput are the size
	// limits of limits.go; the defaults if zero.
	MaxAnswerBytes    int
	MaxArgumentBytes  int
	MaxStreamedOutput int
	// OutputDir, if set, keeps the whole output of commands whose result
	// is cut, a directory per session, for read_tool_output.
	OutputDir string
	// Roots returns a session's additional directories (--add-dir,
	// /add-dir, permissions.additionalDirectories): roots beside the
	// workspace that tools may use, with the same boundary checks and
	// protected paths. Nil adds none; an error stops the turn.
	Roots func(ctx context.Context, sess *protocol.Session) ([]string, error)
	// Jobs, if set, runs the background processes of the session's
	// commands (run_command with background: true).
	Jobs *execx.Jobs
	// TempJournal, if set, records the temporary files of workspace
	// writes, so a later start can remove those of a killed process.
	TempJournal *tools.TempJournal
	// ApprovalPoll is how often a turn waiting for an approval reads the
	// store for an answer given in another process; DefaultApprovalPoll
	// if zero.
	ApprovalPoll time.Duration
	// Subagents, if set, returns the subagent types a session's task
	// tool offers, with warnings for the user (agent files that could
	// not be read); it is called at the session's first turn in this
	// process, with the tools. Nil offers no task tool.
	Subagents func(ctx context.Context, sess *protocol.Session) ([]subagent.Definition, []string)
	// SubagentLimits bound each subagent; see SubagentLimits.
	SubagentLimits SubagentLimits
	// Worktrees is the folder writing subagents' git worktrees are made
	// in (worktree: true); empty refuses worktree delegation.
	Worktrees string
	// Diagnose, if set, checks the files a file-editing call changes
	// with a language server (see DiagnoseFunc).
	Diagnose DiagnoseFunc
	// Logger receives diagnostics; discarded if nil.
	Logger *slog.Logger
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Core owns the progress of sessions: at most one turn per session, guarded
// in this process by a set and across processes by the store's leases.
// It is safe for concurrent use.
type Core struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	active map[string]context.CancelCauseFunc // session id → cancel of its turn
	files  map[string]*tools.FileTracker      // session id → read-before-write guard
	// unsaved holds, per session, file versions the guard recorded that
	// are not stored yet; the turn's next batch stores them.
	unsaved map[string][]protocol.FileVersion
	// waiters wake the turns of this process waiting for an answer, by
	// approval id (see answer.go).
	waiters map[string]chan struct{}
	// calibrators correct token estimates by model, from reported usage.
	calibrators map[string]*catalog.Calibrator
	// estimateCaches keep each session's per-message token estimates.
	estimateCaches map[string]*estimateCache
	// started are the sessions whose SessionStart hooks ran in this
	// process; noticed the hooks notices already shown.
	started, noticed map[string]bool

	// Background work of finished turns (afterturn.go): bgCtx ends it,
	// bgWG counts it, and background holds the sessions whose records it
	// is writing (a turn starting meanwhile waits for it).
	bgCtx      context.Context
	bgCancel   context.CancelFunc
	bgWG       sync.WaitGroup
	background map[string]bool
	// editors are the user's editors by session id (SetEditor).
	editors sync.Map
	// registries are the sessions' tool registries (SessionTools), kept
	// for their later turns.
	registries map[string]*tools.Registry
}

// sessionTools returns the session's tool registry and, the first time
// it is built in this process, the warnings that came with it.
func (c *Core) sessionTools(ctx context.Context, sess *protocol.Session) (*tools.Registry, []string, error) {
	if c.opts.SessionTools == nil && c.opts.Subagents == nil {
		return c.opts.Tools, nil, nil
	}
	c.mu.Lock()
	reg, ok := c.registries[sess.ID]
	c.mu.Unlock()
	if ok {
		return reg, nil, nil
	}
	reg = c.opts.Tools
	var warnings []string
	if c.opts.SessionTools != nil {
		var err error
		if reg, warnings, err = c.opts.SessionTools(ctx, sess); err != nil {
			return nil, warnings, err
		}
	}
	// A user's session gets the task tool; a subagent's registry is set
	// when it starts (startChild).
	if c.opts.Subagents != nil && sess.ParentID == "" {
		defs, w := c.opts.Subagents(ctx, sess)
		if sess.MessageCount == 0 {
			warnings = append(warnings, w...)
		}
		var err error
		if reg, err = reg.With(newTaskTool(defs, c.opts.Worktrees != "")); err != nil {
			return nil, warnings, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.registries[sess.ID]; ok {
		// Another turn of the session built it meanwhile: keep the first.
		return prev, nil, nil
	}
	if c.registries == nil {
		c.registries = make(map[string]*tools.Registry)
	}
	c.registries[sess.ID] = reg
	return reg, warnings, nil
}

// estimates returns the session's cache of per-message token estimates.
func (c *Core) estimates(sessionID string) *estimateCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.estimateCaches == nil {
		c.estimateCaches = make(map[string]*estimateCache)
	}
	e, ok := c.estimateCaches[sessionID]
	if !ok {
		e = &estimateCache{}
		c.estimateCaches[sessionID] = e
	}
	return e
}

// calibrator returns the model's token estimate calibrator.
func (c *Core) calibrator(model string) *catalog.Calibrator {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calibrators == nil {
		c.calibrators = make(map[string]*catalog.Calibrator)
	}
	cal, ok := c.calibrators[model]
	if !ok {
		cal = &catalog.Calibrator{}
		c.calibrators[model] = cal
	}
	return cal
}

// New returns a Core.
func New(opts Options) (*Core, error) {
	if opts.Store == nil || opts.Models == nil || opts.Tools == nil {
		return nil, errors.New("agent: Store, Models and Tools are required")
	}
	if opts.Owner == "" {
		opts.Owner = store.NewOwner()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = store.DefaultLeaseTTL
	}
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = DefaultMaxIterations
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = DefaultMaxParallel
	}
	if opts.MaxAnswerBytes <= 0 {
		opts.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if opts.MaxArgumentBytes <= 0 {
		opts.MaxArgumentBytes = DefaultMaxArgumentBytes
	}
	if opts.MaxStreamedOutput <= 0 {
		opts.MaxStreamedOutput = DefaultMaxStreamedOutput
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ApprovalPoll <= 0 {
		opts.ApprovalPoll = DefaultApprovalPoll
	}
	opts.SubagentLimits = opts.SubagentLimits.withDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := &Core{opts: opts, log: log, active: make(map[string]context.CancelCauseFunc),
		files: make(map[string]*tools.FileTracker), unsaved: make(map[string][]protocol.FileVersion),
		waiters: make(map[string]chan struct{}), background: make(map[string]bool)}
	c.bgCtx, c.bgCancel = context.WithCancel(context.Background())
	return c, nil
}

// Owner returns the name this Core holds leases under.
func (c *Core) Owner() string { return c.opts.Owner }

// CreateSession stores a new idle session for a workspace and emits
// session.created to sink (which may be nil).
func (c *Core) CreateSession(ctx context.Context, workspace, model string, sink Sink) (*protocol.Session, error) {
	now := c.opts.Now().UTC()
	s := &protocol.Session{
		ID:        newID(),
		Workspace: workspace,
		Model:     model,
		Status:    protocol.StatusIdle,
		CreatedAt: now,
		UpdatedAt: now,
	}
	// The session and its first event are stored together.
	e := protocol.Event{Type: protocol.EventSessionCreated, SessionID: s.ID, Model: model, Session: s, Timestamp: now}
	if err := c.opts.Store.AppendBatch(ctx, s.ID, store.Batch{NewSession: s, Events: []*protocol.Event{&e}}); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	if sink != nil {
		sink(e)
	}
	return s, nil
}

// Cancel stops the turn running on the session in this process, if any.
func (c *Core) Cancel(sessionID string) bool {
	c.mu.Lock()
	cancel, ok := c.active[sessionID]
	c.mu.Unlock()
	if ok {
		cancel(context.Canceled)
	}
	return ok
}

// claim marks the session as running a turn in this process. While
// background work records its results on the session (a moment), the
// turn waits for it rather than fail.
func (c *Core) claim(sessionID string, cancel context.CancelCauseFunc) error {
	for wait := 0; ; wait++ {
		c.mu.Lock()
		if _, busy := c.active[sessionID]; busy {
			c.mu.Unlock()
			return ErrTurnActive
		}
		if !c.background[sessionID] || wait >= 200 {
			c.active[sessionID] = cancel
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
}

// claimBackground marks the session as written by background work once no
// turn of this process runs on it.
func (c *Core) claimBackground(ctx context.Context, sessionID string) error {
	for {
		c.mu.Lock()
		if _, busy := c.active[sessionID]; !busy && !c.background[sessionID] {
			c.background[sessionID] = true
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Core) unclaimBackground(sessionID string) {
	c.mu.Lock()
	delete(c.background, sessionID)
	c.mu.Unlock()
}

// fileTracker returns the session's read-before-write guard. It is kept in
// the store as well, so a session continued by another process still knows
// which files it has read.
func (c *Core) fileTracker(ctx context.Context, sessionID, root string) (*tools.FileTracker, error) {
	c.mu.Lock()
	ft, ok := c.files[sessionID]
	c.mu.Unlock()
	if ok {
		return ft, nil
	}
	known, err := c.opts.Store.Files(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	ft = tools.NewFileTracker(root)
	ft.Restore(known)
	ft.SetOnRecord(func(v protocol.FileVersion) {
		c.mu.Lock()
		c.unsaved[sessionID] = append(c.unsaved[sessionID], v)
		c.mu.Unlock()
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.files[sessionID]; ok {
		return prev, nil
	}
	c.files[sessionID] = ft
	return ft, nil
}

// takeUnsaved returns and forgets the session's file versions not stored
// yet.
func (c *Core) takeUnsaved(sessionID string) []protocol.FileVersion {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.unsaved[sessionID]
	delete(c.unsaved, sessionID)
	return v
}

func (c *Core) unclaim(sessionID string) {
	c.mu.Lock()
	delete(c.active, sessionID)
	c.mu.Unlock()
}

// emit stores e if its type is stored (assigning its sequence) and hands it
// to sink.
func (c *Core) emit(ctx context.Context, e *protocol.Event, sink Sink) error {
	if e.Timestamp.IsZero() {
		e.Timestamp = c.opts.Now().UTC()
	}
	if e.Type.Stored() {
		if err := c.opts.Store.AppendEvent(ctx, e); err != nil {
			return fmt.Errorf("store event %s: %w", e.Type, err)
		}
	}
	if sink != nil {
		sink(*e)
	}
	return nil
}

// heartbeat renews the lease every third of its TTL until ctx ends. If the
// lease is lost it cancels the turn with ErrLeaseLost.
func (c *Core) heartbeat(ctx context.Context, sessionID string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(c.opts.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, err := c.opts.Store.RenewLease(ctx, sessionID, c.opts.Owner, c.opts.LeaseTTL)
			switch {
			case err == nil:
			case errors.Is(err, store.ErrLeaseLost):
				c.log.Warn("lease lost", "session", sessionID)
				cancel(ErrLeaseLost)
				return
			case ctx.Err() != nil:
				return
			default:
				// A transient store error: try again at the next tick;
				// if the lease expires meanwhile, the next renewal says so.
				c.log.Warn("renew lease", "session", sessionID, "err", err)
			}
		}
	}
}

// newID returns a random identifier of 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
