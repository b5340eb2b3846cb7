package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/compact"
	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// TurnRequest is one user message to take through the loop.
type TurnRequest struct {
	SessionID string
	Input     string
	// Model, if set, switches the session to this model ("provider/model")
	// from this turn on.
	Model string
	// MaxIterations overrides the iteration budget of this turn.
	MaxIterations int
	// OnAsk says what happens when a call needs a person's approval.
	OnAsk AskPolicy
	// Budget caps the turn; zero fields are no cap.
	Budget Budget
	// TurnModel, if set, is the model of this turn only (a custom
	// command's model): the session keeps its own for the next turns.
	TurnModel string
	// Grants are allow rules for this turn only (a custom command's
	// allowed-tools); deny rules and hard checks still apply.
	Grants []permission.Grant
	// Typed, if set, is what the user typed when Input was made from it
	// (a custom command's prompt): requests to remember are looked for
	// in the user's own words, not in the command's text.
	Typed string
	// Images are pictures sent with Input; the turn is refused before
	// anything is stored when the model does not read images.
	Images []protocol.Image
	// SendQueued makes the turn's message the session's queued messages,
	// followed by Input if set, instead of giving them back: they leave
	// the queue in the transaction that stores the message (sendqueued.go).
	// With nothing queued and no Input, Run does nothing.
	SendQueued bool
	// StopIfInterrupted makes a turn that finds the session's last turn
	// interrupted by a process that died (see recoverHeld) return
	// *InterruptedTurnError, having recorded that turn as failed, instead
	// of going on with its own message: a server resumes the interrupted
	// turn first.
	StopIfInterrupted bool
}

// Budget caps what a turn may spend. At 80 % of a cap a warning event is
// emitted; at 100 % the turn stops between steps with a *BudgetError.
type Budget struct {
	// Per turn (a run).
	MaxTokens   int64
	MaxCostUSD  float64
	MaxDuration time.Duration
	// Per session, over all its turns.
	MaxSessionTokens  int64
	MaxSessionCostUSD float64
}

// SubmitTurn runs a turn and yields its events in order, ending with the
// turn's error, if any, as a final (zero Event, err) pair. A consumer that
// stops iterating cancels the turn; the turn still cleans up before the
// iterator returns.
func (c *Core) SubmitTurn(ctx context.Context, req TurnRequest) iter.Seq2[protocol.Event, error] {
	return func(yield func(protocol.Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopped := false
		err := c.Run(ctx, req, func(e protocol.Event) {
			if !stopped && !yield(e, nil) {
				stopped = true
				cancel()
			}
		})
		if err != nil && !stopped {
			yield(protocol.Event{}, err)
		}
	}
}

// Run takes one user message through the loop of DESIGN §3, reporting every
// event to sink (see Sink for when and how it is called). It returns nil when the model answered without tool
// calls; otherwise the reason the turn ended: ctx's error when cancelled,
// *MaxIterationsError, *ConfigError, ErrTurnActive, *store.LeaseHeldError,
// ErrSessionNotFound, or the provider's or store's error.
//
// Whatever happens, when Run returns the session is not left running: its
// status is idle, failed or cancelled, and the lease is released.
func (c *Core) Run(ctx context.Context, req TurnRequest, sink Sink) error {
	if sess, err := c.opts.Store.GetSession(ctx, req.SessionID); err == nil && sess.Status == protocol.StatusWaitingForApproval {
		pending, err := c.opts.Store.PendingApprovals(ctx, req.SessionID)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			// The turn waits for an answer: the message must not jump
			// ahead of it. It is sent when the session is free.
			if req.SendQueued && req.Input == "" {
				return &QueuedError{SessionID: req.SessionID, Waiting: pending[0]}
			}
			q, err := c.Enqueue(ctx, req.SessionID, req.Input, sink)
			if err != nil {
				return err
			}
			return &QueuedError{SessionID: req.SessionID, Input: q, Waiting: pending[0]}
		}
	}
	if err := c.checkImages(ctx, req); err != nil {
		return err
	}
	setup := turnSetup{sessionID: req.SessionID, model: req.Model, maxIter: req.MaxIterations, onAsk: req.OnAsk, budget: req.Budget,
		turnModel: req.TurnModel, grants: req.Grants, typed: req.Typed, stopIfInterrupted: req.StopIfInterrupted}
	err := c.drive(ctx, setup, sink, func(t *turn) error {
		t.images = req.Images
		if req.SendQueued {
			return t.sendQueued(req.Input)
		}
		t.returnQueued() // left by a turn that ended without sending them
		return t.run(req.Input)
	})
	if errors.Is(err, errNothingQueued) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.runQueued(ctx, setup, sink)
}

// runQueued sends, as one more turn each time, the messages queued while
// the session was busy, until none is left or a turn does not end well.
// They stay queued until the turn that sends them stores them.
func (c *Core) runQueued(ctx context.Context, setup turnSetup, sink Sink) error {
	for {
		queued, err := c.opts.Store.QueuedInputs(ctx, setup.sessionID)
		if err != nil || len(queued) == 0 {
			return err
		}
		setup.model, setup.turnModel, setup.grants, setup.typed = "", "", nil, ""
		err = c.drive(ctx, setup, sink, func(t *turn) error { return t.sendQueued("") })
		if errors.Is(err, errNothingQueued) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Enqueue stores a user message for a session that is busy (running or
// waiting for an approval) and emits input.queued. The message is sent,
// in order with other queued ones, when the session's turn ends. An error
// means the message was not queued.
func (c *Core) Enqueue(ctx context.Context, sessionID, input string, sink Sink) (protocol.QueuedInput, error) {
	q, err := c.opts.Store.EnqueueInput(ctx, sessionID, input)
	if err != nil {
		return q, fmt.Errorf("queue input: %w", err)
	}
	// The message is queued: it will be sent, so the caller must hear
	// that it was accepted even if its notice cannot be stored (a client
	// told otherwise would send it again).
	e := protocol.Event{Type: protocol.EventInputQueued, SessionID: sessionID, Text: input, Queued: []protocol.QueuedInput{q}}
	if err := c.emit(ctx, &e, sink); err != nil {
		c.log.Warn("message queued, its input.queued event not stored", "session", sessionID, "err", err)
	}
	return q, nil
}

// QueuedError is returned by Run when the session waits for an approval:
// the input was queued, not sent.
type QueuedError struct {
	SessionID string
	Input     protocol.QueuedInput
	// Waiting is the approval the session waits for.
	Waiting protocol.Approval
}

func (e *QueuedError) Error() string {
	return fmt.Sprintf("session %s waits for approval of %q (request %s); the message is queued and will be sent after it is answered",
		e.SessionID, e.Waiting.Summary, e.Waiting.ID)
}

// turnSetup is what drive needs to start or resume a turn.
type turnSetup struct {
	sessionID string
	model     string // "" keeps the session's model
	maxIter   int
	onAsk     AskPolicy
	turnID    string // set when resuming a paused turn
	budget    Budget
	turnModel string             // the model of this turn only, if set
	grants    []permission.Grant // allow rules of this turn only
	typed     string             // what the user typed, if Input was made from it
	parent    *parentLink        // set for a subagent's turn
	// stopIfInterrupted: see TurnRequest.StopIfInterrupted.
	stopIfInterrupted bool
}

// drive does what every turn needs around its body: refuse early (no
// session, no ready model, a malformed policy, a turn already running here
// or elsewhere), hold the lease with a heartbeat, and record how the turn
// ended whatever happens.
func (c *Core) drive(ctx context.Context, setup turnSetup, sink Sink, body func(*turn) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	st := c.opts.Store
	sess, err := st.GetSession(ctx, setup.sessionID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrSessionNotFound, setup.sessionID)
	}
	if err != nil {
		return err
	}
	modelID := setup.model
	switch {
	case setup.turnModel != "":
		modelID = setup.turnModel
	case modelID == "":
		modelID = sess.Model
	}
	model, err := c.opts.Models(modelID)
	if err != nil {
		return &ConfigError{Err: err}
	}
	// The first request follows the turn's set-up: connect meanwhile.
	if w, ok := model.Client.(llm.Warmer); ok {
		w.Warm()
	}
	var roots []string
	if c.opts.Roots != nil {
		if roots, err = c.opts.Roots(ctx, sess); err != nil {
			return &ConfigError{Err: err}
		}
	}
	ws, err := tools.NewWorkspace(sess.Workspace, roots...)
	if err != nil {
		return &ConfigError{Err: fmt.Errorf("workspace of session %s: %w", sess.ID, err)}
	}
	ws = ws.WithTempJournal(c.opts.TempJournal)
	// A new session's prompt tells the git status: take it while the
	// turn gets ready, not before the first request.
	var git func() *GitState
	if sess.MessageCount == 0 && c.opts.SystemPrompt == "" {
		git = startGitProbe(ctx, ws.Root())
	}
	files, err := c.fileTracker(ctx, sess.ID, ws.Root())
	if err != nil {
		return err
	}
	var policy *permission.Policy
	var runner *hooks.Runner
	if p := setup.parent; p != nil {
		// A subagent decides as its parent does, never more loosely, and
		// runs its parent's hooks.
		policy, runner = p.turn.policy, p.turn.hooks
	} else {
		if c.opts.Permissions != nil {
			if policy, err = c.opts.Permissions(ctx, sess); err != nil {
				return &ConfigError{Err: err}
			}
			if len(setup.grants) > 0 {
				if policy, err = policy.WithGrants(setup.grants...); err != nil {
					return &ConfigError{Err: err}
				}
			}
		}
		if c.opts.Hooks != nil {
			if runner, err = c.opts.Hooks(ctx, sess); err != nil {
				return &ConfigError{Err: err}
			}
		}
	}
	var commands *execx.Runner
	if c.opts.Commands != nil {
		if commands, err = c.opts.Commands(ctx, sess); err != nil {
			return &ConfigError{Err: err}
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, stopClock := withTimeBudget(ctx, setup.budget.MaxDuration)
	defer stopClock()
	if err := c.claim(sess.ID, cancel); err != nil {
		return err
	}
	defer c.unclaim(sess.ID)
	// Who ran a turn left running, for the resume's notice (recoverHeld).
	var prevOwner string
	if sess.Status == protocol.StatusRunning {
		if l, err := st.GetLease(ctx, sess.ID); err == nil && l.Owner != c.opts.Owner {
			prevOwner = l.Owner
		}
	}
	if _, err := st.AcquireLease(ctx, sess.ID, c.opts.Owner, c.opts.LeaseTTL); err != nil {
		return err
	}
	// Every write of the turn is fenced by the lease: once another
	// process has taken the session over, none goes through.
	ctx = store.WithLease(ctx, sess.ID, c.opts.Owner)
	// From here on the cleanup must run even if ctx is cancelled.
	bg := context.WithoutCancel(ctx)
	hbCtx, stopHeartbeat := context.WithCancel(ctx)
	go c.heartbeat(hbCtx, sess.ID, cancel)
	defer func() {
		stopHeartbeat()
		if err := st.ReleaseLease(bg, sess.ID, c.opts.Owner); err != nil {
			c.log.Warn("release lease", "session", sess.ID, "err", err)
		}
	}()
	if setup.turnID == "" {
		cur, recovered, err := c.recoverHeld(ctx, sess.ID)
		if err != nil {
			return err
		}
		if recovered && setup.stopIfInterrupted {
			return &InterruptedTurnError{SessionID: sess.ID, Owner: prevOwner}
		}
		sess = cur
	}
	// A command that changes the workspace needs its first checkpoint:
	// take it in the background meanwhile (checkpoint.go).
	c.warmCheckpoints(ws.Root())
	// The session's tools are settled under the lease: at its first turn
	// this may start its MCP servers and freezes their tool list.
	reg, toolWarnings, err := c.sessionTools(ctx, sess)
	if err != nil {
		return &ConfigError{Err: err}
	}

	t := &turn{
		core:             c,
		ctx:              ctx,
		bg:               bg,
		sess:             sess,
		model:            model,
		ws:               ws,
		files:            files,
		policy:           policy,
		hooks:            runner,
		cmds:             commands,
		tools:            reg,
		git:              git,
		onAsk:            setup.onAsk,
		keepSessionModel: setup.turnModel != "",
		typed:            setup.typed,
		budget:           setup.budget,
		parent:           setup.parent,
		subSlots:         make(chan struct{}, c.opts.SubagentLimits.MaxParallel),
		id:               setup.turnID,
		sink:             sink,
		seen:             make(map[string]bool),
		start:            c.opts.Now(),
	}
	if t.id == "" {
		t.id = newID()
	}
	t.maxIter = setup.maxIter
	if t.maxIter <= 0 {
		t.maxIter = c.opts.MaxIterations
	}
	defer func() { err = t.finish(err) }()
	for _, w := range toolWarnings {
		t.tell(protocol.Event{Type: protocol.EventWarning, Text: w})
	}
	return body(t)
}

// turn is the state of one running turn. Its methods run on Run's
// goroutine, except the tool calls of a parallel batch (see runBatch).
type turn struct {
	core   *Core
	ctx    context.Context // cancelled when the turn must stop
	bg     context.Context // for the writes that must happen anyway
	sess   *protocol.Session
	model  Model
	id     string
	ws     *tools.Workspace
	files  *tools.FileTracker
	policy *permission.Policy
	hooks  *hooks.Runner
	cmds   *execx.Runner    // the sandbox of run_command; nil for none
	tools  *tools.Registry  // the session's tools (frozen, see Options.SessionTools)
	git    func() *GitState // the git status probe started for a new session, if any
	parent *parentLink      // the task call that started this subagent's turn; nil for a user's
	// subSlots bounds the subagents this turn's task calls run at once.
	subSlots chan struct{}
	// keepSessionModel says the turn's model is for this turn only.
	keepSessionModel bool
	onAsk            AskPolicy
	budget           Budget
	warned           map[string]bool  // budgets already warned about
	repeats          map[string][]int // call key → steps it was made at
	looping          *LoopError
	maxIter          int
	// freeSteps are steps that do not count against maxIter (every call
	// a rejected duplicate).
	freeSteps int

	// tooLarge holds the calls whose arguments were dropped (limits.go).
	tooLarge map[string]int64
	// windowCap is the context window the provider named when it refused
	// a request as too long (overflow.go); 0 until then.
	windowCap int

	sinkMu sync.Mutex // serialises emit: tool goroutines may report output
	sink   Sink
	start  time.Time

	stopHookActive bool
	hk             hookState
	sessDirty      bool // t.sess changed since it was last stored

	// held is an answer with tool calls and its events, not stored yet:
	// they go into the store with the next record, in the same
	// transaction as the first call's tool.started (see hold).
	held    []*protocol.Message
	heldEvs []protocol.Event

	// partial is the text of an answer still streaming, kept for the
	// turn.cancelled event if the user stops it (a failed stream keeps
	// nothing: it may be a runaway answer).
	partial    strings.Builder
	firstToken time.Duration // from the turn's start to its first token, less waited
	waited     time.Duration // waiting for the user's approvals
	modelTime  time.Duration // waiting for the model
	toolTime   time.Duration // running tools (wall time)

	cost           float64 // estimated cost of the turn so far
	costKnown      bool
	contextPercent float64 // context use of the last request

	auditMu sync.Mutex
	audits  []*protocol.AuditEntry // recorded decisions not stored yet

	// Context management (context.go): the transcript as stored, its
	// per-message token estimates, its compactions.
	history       []protocol.Message
	counts        []int
	records       []compact.Record
	pinned        int
	specsEstimate int
	viewEstimate  int  // estimated prompt tokens of the last request
	compactFailed bool // a summary failed in this turn: drop old turns instead

	// request is the user's message (before hooks add to it), typed
	// what the user typed if the message was made from it (a custom
	// command); user is the stored one. Post-turn observers read them
	// (afterturn.go).
	request, typed string
	user           *protocol.Message
	// hasSkills says the session was frozen with skills: only then is it
	// offered the skill tool (sessionctx.go).
	hasSkills bool

	view  []llm.Message // what the model sees, kept in step with the store
	seen  map[string]bool
	usage protocol.Usage
	step  int

	images []protocol.Image // sent with the turn's user message
	// sending are the queued messages the user message is made of
	// (sendqueued.go); they leave the queue when it is stored.
	sending []protocol.QueuedInput
}

// emit stores e (unless it is a delta) and hands it to the sink; an error
// means it could not be stored.
func (t *turn) emit(e protocol.Event) error {
	return t.record(nil, e)
}

// tell emits an event the turn goes on without (a warning, a retry, a
// hook's notice): if it cannot be stored, the error is logged rather than
// returned, so a full disk does not end the turn over a notice — and is
// not dropped silently either.
func (t *turn) tell(e protocol.Event) {
	if err := t.emit(e); err != nil {
		t.core.log.Warn("store event", "session", t.sess.ID, "turn", t.id, "type", string(e.Type), "err", err)
	}
}

// recordCompaction stores a compaction record with its event.
func (t *turn) recordCompaction(c *protocol.Compaction, e protocol.Event) error {
	t.sinkMu.Lock()
	defer t.sinkMu.Unlock()
	e.SessionID, e.TurnID = t.sess.ID, t.id
	t.stampParent(&e)
	if e.Timestamp.IsZero() {
		e.Timestamp = t.core.opts.Now().UTC()
	}
	if err := t.core.opts.Store.AppendBatch(t.bg, t.sess.ID, store.Batch{Compaction: c, Events: []*protocol.Event{&e}}); err != nil {
		return fmt.Errorf("store compaction: %w", err)
	}
	if t.sink != nil {
		t.sink(e)
	}
	return nil
}

// setStatus stores the session's new status (with its usage and model)
// and emits session.updated, in one batch.
func (t *turn) setStatus(s protocol.SessionStatus, lastErr string) error {
	t.statusEvent(s, lastErr)
	return t.emit(protocol.Event{Type: protocol.EventSessionUpdated, Status: s, Error: lastErr})
}

// statusEvent changes the session's status in memory and marks the
// session to be stored with the next batch.
func (t *turn) statusEvent(s protocol.SessionStatus, lastErr string) {
	t.sess.Status = s
	t.sess.LastError = lastErr
	t.sessDirty = true
}

// record stores msgs and the stored ones of evs in one transaction, then
// hands evs to the sink in order. Events may point at msgs; they carry the
// messages' Seq.
func (t *turn) record(msgs []*protocol.Message, evs ...protocol.Event) error {
	return t.recordChanges(msgs, nil, evs...)
}

// recordChanges is record with the file changes of a call, stored with
// its result, the last of msgs.
func (t *turn) recordChanges(msgs []*protocol.Message, changes []protocol.FileChange, evs ...protocol.Event) error {
	return t.recordDequeue(msgs, changes, nil, evs...)
}

// recordDequeue is recordChanges that also takes queued inputs out of the
// queue in the same transaction (store.Batch.Dequeue).
func (t *turn) recordDequeue(msgs []*protocol.Message, changes []protocol.FileChange, dequeue []protocol.QueuedInput, evs ...protocol.Event) error {
	t.sinkMu.Lock()
	defer t.sinkMu.Unlock()
	if len(t.held) > 0 || len(t.heldEvs) > 0 {
		msgs = append(append([]*protocol.Message(nil), t.held...), msgs...)
		evs = append(append([]protocol.Event(nil), t.heldEvs...), evs...)
	}
	now := t.core.opts.Now().UTC()
	for _, m := range msgs {
		m.TurnID = t.id
	}
	stored := make([]*protocol.Event, 0, len(evs))
	for i := range evs {
		e := &evs[i]
		e.SessionID, e.TurnID = t.sess.ID, t.id
		t.stampParent(e)
		if e.Timestamp.IsZero() {
			e.Timestamp = now
		}
		if e.Type.Stored() {
			stored = append(stored, e)
		}
	}
	// Deltas alone are never stored; a changed session rides along with
	// the next stored record.
	if len(stored) > 0 || len(msgs) > 0 || len(dequeue) > 0 {
		b := store.Batch{Messages: msgs, Events: stored, Dequeue: dequeue}
		if len(changes) > 0 {
			b.Changes = []store.CallChanges{{Result: msgs[len(msgs)-1], Changes: changes}}
		}
		if t.sessDirty {
			b.UpdateSession = t.sess
		}
		// Decisions and file versions recorded since the last batch
		// travel with this one.
		b.Audit, b.Files = t.takeAudit(), t.core.takeUnsaved(t.sess.ID)
		if err := t.core.opts.Store.AppendBatch(t.bg, t.sess.ID, b); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		t.sessDirty = false
		t.held, t.heldEvs = nil, nil
		t.remember(msgs)
	}
	if t.sink != nil {
		for _, e := range evs {
			t.sink(e)
		}
	}
	return nil
}

// hold keeps an answer with tool calls, and its events, for the next
// record instead of storing them at once. Nothing the calls do happens
// before that record: the first call's tool.started, an early result, a
// hook (runHooks) or an approval (createApproval) each stores what is held
// first, in one transaction with what it records itself. That saves a
// write transaction on every step, which is most of the store's cost per
// step (each takes the WAL's locks and writes its pages).
func (t *turn) hold(msg *protocol.Message, evs []protocol.Event) {
	t.sinkMu.Lock()
	defer t.sinkMu.Unlock()
	t.held = append(t.held, msg)
	t.heldEvs = append(t.heldEvs, evs...)
}

// flushHeld stores what hold kept, if anything.
func (t *turn) flushHeld() error {
	t.sinkMu.Lock()
	n := len(t.held) + len(t.heldEvs)
	t.sinkMu.Unlock()
	if n == 0 {
		return nil
	}
	return t.record(nil)
}

func (t *turn) run(input string) error {
	if !t.keepSessionModel {
		t.sess.Model = t.model.ID
	}
	history, err := t.core.transcript(t.bg, t.sess.ID)
	if err != nil {
		return fmt.Errorf("load transcript: %w", err)
	}
	t.warnQuarantined()
	if err := t.loadContext(history); err != nil {
		return err
	}
	t.hookNotices()
	var msgs []*protocol.Message
	var frozen []protocol.Event
	t.request = input
	if t.typed == "" {
		t.typed = input
	}
	started := t.sessionStart(len(history) == 0)
	if len(history) == 0 {
		// A new session: freeze its system prompt, with its memory and
		// skill index (sessionctx.go) and what SessionStart hooks add.
		sc := t.sessionContext(input)
		prompt := t.core.opts.SystemPrompt
		if prompt == "" {
			prompt = BuildPrompt(t.environment()).WithContext(sc).Text()
		} else {
			prompt = withSections(prompt, sc)
		}
		if t.parent != nil {
			prompt += "\n\n" + t.parent.prompt
		}
		if sc != nil {
			frozen = append(frozen, protocol.Event{Type: protocol.EventContextFrozen, Context: &sc.Frozen})
		}
		t.hasSkills = sc != nil && len(sc.Frozen.Skills) > 0
		if started != "" {
			prompt += "\n\n" + started
		}
		msgs = append(msgs, &protocol.Message{Role: protocol.RoleSystem, Content: prompt})
		// The project's instructions (AGENTS.md) are frozen with it: later
		// edits affect new sessions only.
		if t.core.opts.Context != nil {
			text, warnings := t.core.opts.Context(t.ws.Root())
			for _, w := range warnings {
				t.tell(protocol.Event{Type: protocol.EventWarning, Text: w})
			}
			if strings.TrimSpace(text) != "" {
				msgs = append(msgs, &protocol.Message{Role: protocol.RoleSystem, Content: text})
			}
		}
	} else {
		t.hasSkills = t.frozenSkills()
		if note := t.environmentNote(); note != "" {
			// What changed since the model was last told (mode, model,
			// date…) comes as a note before the message: the system
			// prompt stays as it was, and so does the prompt cache.
			msgs = append(msgs, &protocol.Message{Role: protocol.RoleSystem, Content: note})
		}
		if started != "" {
			input += "\n\n" + started
		}
	}
	input, err = t.userPromptSubmit(input)
	if err != nil {
		return err
	}
	// Only a prompt the hooks let through titles the session.
	if t.sess.Title == "" {
		t.sess.Title = titleOf(input)
	}
	user := &protocol.Message{Role: protocol.RoleUser, Content: input, Images: t.images}
	msgs = append(msgs, user)
	// The status, the start of the turn and the user's message (with a
	// new session's system prompt) are stored together, before the model
	// is called.
	t.statusEvent(protocol.StatusRunning, "")
	evs := append([]protocol.Event{
		{Type: protocol.EventSessionUpdated, Status: protocol.StatusRunning},
		{Type: protocol.EventTurnStarted, Model: t.model.ID}},
		append(frozen, protocol.Event{Type: protocol.EventMessageCompleted, Message: user.WithoutImageData()})...)
	// Queued messages sent as this one leave the queue with it.
	if err := t.recordDequeue(msgs, nil, t.sending, evs...); err != nil {
		return err
	}
	t.user = user
	// Repair once; from here on every message is appended to the view as
	// it is stored, and every call gets its result in call order, so the
	// view stays equal to repairView of the stored transcript. With
	// context management on, the view is projected before every request
	// instead (prepareView).
	t.startView()
	return t.loop()
}

// loop asks the model and runs the tools it asks for, step after step,
// until it answers without tool calls or the budget is spent. t.step is
// the number of steps already taken in this turn.
func (t *turn) loop() error {
	specs := t.offeredTools()
	for t.step++; t.step <= t.maxIter+t.freeSteps; t.step++ {
		if err := t.ctx.Err(); err != nil {
			return err
		}
		if t.hk.isHalted() {
			return t.stopped()
		}
		if err := t.checkBudget(); err != nil {
			return err
		}
		if err := t.prepareView(specs); err != nil {
			return err
		}
		resp, err := t.completeFitting(specs)
		if err != nil {
			return err
		}
		calls, err := t.storeAssistant(resp)
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			if more, err := t.stopHook(resp.Text); more || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			return nil
		}
		if err := t.runCalls(calls); err != nil {
			return err
		}
		if t.looping != nil {
			return t.looping
		}
	}
	return &MaxIterationsError{N: t.maxIter}
}

// checkBudget stops the turn between steps when a budget is spent, and
// warns once at 80 %.
func (t *turn) checkBudget() error {
	b := t.budget
	type gauge struct {
		what        string
		used, limit float64
		format      func(float64) string
	}
	tokens := func(v float64) string { return fmt.Sprintf("%.0f tokens", v) }
	usd := func(v float64) string { return fmt.Sprintf("$%.4f", v) }
	secs := func(v float64) string { return (time.Duration(v) * time.Second).String() }
	var gauges []gauge
	if b.MaxTokens > 0 {
		gauges = append(gauges, gauge{"tokens", float64(t.usage.InputTokens + t.usage.OutputTokens), float64(b.MaxTokens), tokens})
	}
	if b.MaxCostUSD > 0 {
		gauges = append(gauges, gauge{"cost", t.cost, b.MaxCostUSD, usd})
	}
	if b.MaxDuration > 0 {
		gauges = append(gauges, gauge{"time", time.Since(t.start).Seconds(), b.MaxDuration.Seconds(), secs})
	}
	if b.MaxSessionTokens > 0 {
		gauges = append(gauges, gauge{"session tokens", float64(t.sess.Usage.InputTokens + t.sess.Usage.OutputTokens), float64(b.MaxSessionTokens), tokens})
	}
	if b.MaxSessionCostUSD > 0 {
		gauges = append(gauges, gauge{"session cost", t.sess.CostUSD, b.MaxSessionCostUSD, usd})
	}
	for _, g := range gauges {
		if g.used >= g.limit {
			return &BudgetError{What: g.what, Used: g.format(g.used), Limit: g.format(g.limit)}
		}
		if g.used >= 0.8*g.limit && !t.warned[g.what] {
			if t.warned == nil {
				t.warned = make(map[string]bool)
			}
			t.warned[g.what] = true
			t.tell(protocol.Event{Type: protocol.EventWarning, Step: t.step,
				Text: fmt.Sprintf("%s budget 80%% spent: %s of %s", g.what, g.format(g.used), g.format(g.limit))})
		}
	}
	return nil
}

// stopHook runs the Stop hooks when the model has finished with answer.
// A block keeps the turn going with the hooks' reason as a user message,
// every time: as in Claude Code, a hook ends the loop itself by reading
// stop_hook_active (and the iteration budget still bounds it). A hook's
// "continue": false wins over a block.
func (t *turn) stopHook(answer string) (bool, error) {
	name := hooks.Stop
	if t.parent != nil {
		name = hooks.SubagentStop
	}
	res := t.runHooks(hooks.Event{Name: name, StopHookActive: t.stopHookActive, LastAssistantMessage: answer})
	if t.hk.isHalted() {
		return false, t.stopped()
	}
	if !res.Blocked() {
		return false, nil
	}
	t.stopHookActive = true
	msg := protocol.Message{Role: protocol.RoleUser, Content: "A Stop hook asks you to continue: " + strings.TrimSpace(res.Reason)}
	if err := t.record([]*protocol.Message{&msg}, protocol.Event{Type: protocol.EventMessageCompleted, Message: &msg, Step: t.step}); err != nil {
		return false, err
	}
	t.view = append(t.view, toLLM(&msg))
	return true, nil
}

// stopped ends a turn a hook stopped with "continue": false: the turn ends
// as done, and the hook's stopReason is shown to the user (never the
// model).
func (t *turn) stopped() error {
	text := "a hook stopped the turn"
	t.hk.mu.Lock()
	reason := t.hk.haltReason
	t.hk.mu.Unlock()
	if r := strings.TrimSpace(reason); r != "" {
		text += ": " + r
	}
	return t.emit(protocol.Event{Type: protocol.EventHookWarning, Text: text, Step: t.step})
}

// complete sends the view to the model and streams the deltas to the sink.
func (c *Core) complete(t *turn, specs []llm.Tool) (resp *llm.Response, err error) {
	req := c.limitRequest(&llm.Request{Model: t.model.Name, Messages: t.viewForModel(t.view), Tools: specs})
	start := time.Now()
	defer func() { t.modelTime += time.Since(start) }()
	t.partial.Reset()
	defer func() {
		if err == nil {
			t.partial.Reset() // the answer is whole; it is stored next
		}
	}()
	return t.model.Client.Stream(t.ctx, req, func(d llm.Delta) {
		if t.firstToken == 0 && (d.Kind == llm.DeltaText || d.Kind == llm.DeltaReasoning) {
			t.firstToken = time.Since(t.start) - t.waited
		}
		switch d.Kind {
		case llm.DeltaText:
			t.keepPartial(d.Text)
			t.emit(protocol.Event{Type: protocol.EventMessageDelta, Text: d.Text, Step: t.step})
		case llm.DeltaReasoning:
			t.emit(protocol.Event{Type: protocol.EventReasoningDelta, Text: d.Text, Step: t.step})
		case llm.DeltaRetry:
			t.partial.Reset()
			msg := ""
			if d.Err != nil {
				msg = d.Err.Error()
			}
			t.tell(protocol.Event{Type: protocol.EventRetry, Error: msg, Attempt: d.Attempt,
				DelayMS: time.Duration(d.Delay).Milliseconds(), Step: t.step})
		}
	})
}

// storeAssistant stores the model's answer once its stream has ended and
// returns its tool calls.
func (t *turn) storeAssistant(resp *llm.Response) ([]protocol.ToolCall, error) {
	msg := protocol.Message{Role: protocol.RoleAssistant, Content: resp.Text, Reasoning: resp.Reasoning, Model: t.model.ID}
	if len(resp.ToolCalls) > 0 {
		msg.ToolCalls = make([]protocol.ToolCall, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			id := c.ID
			if id == "" {
				// Some gateways send no ids; the result must still link.
				id = fmt.Sprintf("call_%s_%d_%d", t.id[:8], t.step, i)
			}
			msg.ToolCalls[i] = protocol.ToolCall{ID: id, Name: c.Name, Arguments: c.Arguments}
			if c.TooLarge > 0 {
				t.noteTooLarge(&msg.ToolCalls[i], c.TooLarge)
			}
		}
	}
	if resp.HasUsage {
		t.observe(resp.Usage)
		u := protocol.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
			CachedTokens: resp.Usage.CachedTokens, ReasoningTokens: resp.Usage.ReasoningTokens}
		msg.Usage = &u
		t.usage.Add(u)
		t.sess.Usage.Add(u)
	}
	evs := []protocol.Event{{Type: protocol.EventMessageCompleted, Message: &msg, Text: msg.Content, Step: t.step,
		FinishReason: resp.FinishReason}}
	if msg.Usage != nil {
		ue := protocol.Event{Type: protocol.EventUsage, Usage: msg.Usage, Step: t.step}
		if t.core.opts.Catalog != nil {
			m := t.core.opts.Catalog(t.model.ID)
			if m.ContextWindow > 0 {
				ue.ContextPercent = math.Round(float64(msg.Usage.InputTokens+msg.Usage.OutputTokens)*1000/float64(m.ContextWindow)) / 10
			}
			if usd, ok := catalog.Cost(m, *msg.Usage); ok {
				ue.CostUSD = &usd
				t.cost += usd
				t.costKnown = true
				t.sess.CostUSD += usd
			}
			t.contextPercent = ue.ContextPercent
			t.sess.ContextPercent = ue.ContextPercent
			t.sessDirty = true
		}
		evs = append(evs, ue)
	}
	if len(msg.ToolCalls) > 0 {
		t.hold(&msg, evs)
	} else if err := t.record([]*protocol.Message{&msg}, evs...); err != nil {
		return nil, err
	}
	t.view = append(t.view, toLLM(&msg))
	return msg.ToolCalls, nil
}

// toolSpecs returns the tool schemas sent with every request.
func toolSpecs(reg *tools.Registry) []llm.Tool {
	all := reg.Tools()
	specs := make([]llm.Tool, len(all))
	for i, tl := range all {
		// Schemas are written for people; the model gets them compact,
		// which keeps every request smaller.
		info := tl.Info()
		params := info.Schema
		var buf bytes.Buffer
		if json.Compact(&buf, params) == nil {
			params = buf.Bytes()
		}
		specs[i] = llm.Tool{Name: info.Name, Description: strings.TrimSpace(info.Description), Parameters: params}
	}
	return specs
}

// finish records how the turn ended: the status, the final event, pending
// approvals cleared. It returns the turn's error, or a store error if the
// turn succeeded but its end could not be recorded.
func (t *turn) finish(runErr error) error {
	t.waitHooks()
	if errors.Is(runErr, errNothingQueued) || errors.Is(runErr, ErrNothingToContinue) {
		return runErr // the turn never began: nothing to record
	}
	if errors.Is(runErr, store.ErrLeaseLost) {
		// The store refused a write: another process owns the session
		// now (the heartbeat had not noticed yet).
		return fmt.Errorf("turn aborted: %w; the store refused its write: %v", ErrLeaseLost, runErr)
	}
	if errors.Is(context.Cause(t.ctx), ErrLeaseLost) {
		// Another process owns the session now; it is not ours to write.
		return fmt.Errorf("turn aborted: %w", ErrLeaseLost)
	}
	// The session's usage is saved with its status.
	var err error
	var paused *PausedError
	runErr = overBudget(t.ctx, runErr)
	switch {
	case errors.As(runErr, &paused):
		// The session waits for the approval (set by pause); the turn
		// continues when someone answers it.
		t.sessDirty = true
		err = t.emit(protocol.Event{Type: protocol.EventTurnPaused, RequestID: paused.RequestID, Step: t.step})
		if err != nil {
			t.core.log.Error("record paused turn", "session", t.sess.ID, "err", err)
		}
		return runErr
	case runErr == nil:
		u := t.usage
		done := protocol.Event{Type: protocol.EventTurnCompleted, Usage: &u, ContextPercent: t.contextPercent,
			DurationMS: time.Since(t.start).Milliseconds(), Step: t.step, FirstTokenMS: t.firstToken.Milliseconds(),
			ModelMS: t.modelTime.Milliseconds(), ToolMS: t.toolTime.Milliseconds()}
		if t.costKnown {
			c := t.cost
			done.CostUSD = &c
		}
		t.statusEvent(protocol.StatusIdle, "")
		// Post-turn observers (afterturn.go): requests to remember are
		// recorded with the end of the turn; a skill proposal is asked for
		// in the background once it is recorded. Neither fails the turn.
		evs := append(t.rememberRequests(), protocol.Event{Type: protocol.EventSessionUpdated, Status: protocol.StatusIdle}, done)
		if err := t.record(nil, evs...); err != nil {
			return err
		}
		t.proposeSkill()
		return nil
	case errorCode(runErr) != protocol.CodeBudget && (t.ctx.Err() != nil || errors.Is(runErr, context.Canceled)):
		_ = t.core.opts.Store.ClearPendingApprovals(t.bg, t.sess.ID)
		t.returnQueued()
		t.statusEvent(protocol.StatusCancelled, "")
		if err = t.record(nil, protocol.Event{Type: protocol.EventSessionUpdated, Status: protocol.StatusCancelled},
			protocol.Event{Type: protocol.EventTurnCancelled, Step: t.step, Text: t.partial.String()}); err != nil {
			t.core.log.Error("record cancelled turn", "session", t.sess.ID, "err", err)
		}
		return runErr
	default:
		_ = t.core.opts.Store.ClearPendingApprovals(t.bg, t.sess.ID)
		t.returnQueued()
		msg := runErr.Error()
		t.statusEvent(protocol.StatusFailed, msg)
		if err = t.record(nil, protocol.Event{Type: protocol.EventSessionUpdated, Status: protocol.StatusFailed, Error: msg},
			protocol.Event{Type: protocol.EventTurnFailed, Error: msg, Code: failureCode(runErr), Step: t.step}); err != nil {
			t.core.log.Error("record failed turn", "session", t.sess.ID, "err", err)
		}
		return runErr
	}
}

// titleOf makes a session title from its first message.
func titleOf(input string) string {
	const max = 60
	s := []rune(input)
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > max {
		return string(s[:max-1]) + "…"
	}
	return string(s)
}
