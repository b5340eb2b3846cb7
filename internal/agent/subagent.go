package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/subagent"
	"github.com/mx-claw/mx-claw/internal/tools"
	"github.com/mx-claw/mx-claw/internal/worktree"
)

// Subagents. A task call starts a child session (stored with its parent's
// id and its subagent type) and runs one turn of it inside the call: its
// own transcript, its own budgets, its parent's permission policy and
// hooks, a subset of its parent's tools, and a context that ends with the
// parent's. Its events are stored in its own session and also handed to
// the parent's sink, marked with ParentSessionID and ParentToolCallID, so
// a front end can show its progress under the task card and answer its
// approvals through the usual flow. The parent gets the child's final
// answer as the call's result.

// TaskToolName is the name of the tool that starts subagents.
const TaskToolName = "task"

// Defaults of SubagentLimits.
const (
	DefaultSubagentIterations = 20
	DefaultSubagentTime       = 10 * time.Minute
	DefaultSubagentParallel   = 4
)

// SubagentLimits bound each subagent a task call starts. A zero field
// takes its default; a negative MaxTokens or MaxDuration means no cap.
type SubagentLimits struct {
	// MaxIterations is a subagent's iteration budget, unless its
	// definition's maxTurns says otherwise.
	MaxIterations int
	// MaxTokens caps a subagent's tokens (input and output).
	MaxTokens int64
	// MaxDuration caps a subagent's wall time.
	MaxDuration time.Duration
	// MaxParallel is how many subagents one turn runs at once.
	MaxParallel int
}

func (l SubagentLimits) withDefaults() SubagentLimits {
	if l.MaxIterations <= 0 {
		l.MaxIterations = DefaultSubagentIterations
	}
	if l.MaxDuration == 0 {
		l.MaxDuration = DefaultSubagentTime
	}
	if l.MaxParallel <= 0 {
		l.MaxParallel = DefaultSubagentParallel
	}
	return l
}

// parentOnly are tools a subagent never gets: it starts no subagents and
// merges no branches.
var parentOnly = []string{TaskToolName, worktree.MergeToolName}

// parentLink ties a subagent's turn to the task call that started it.
type parentLink struct {
	turn   *turn
	callID string
	def    subagent.Definition
	// prompt is added to the subagent's system prompt.
	prompt string
}

// stampParent marks e as an event of a subagent's session.
func (t *turn) stampParent(e *protocol.Event) {
	if t.parent != nil {
		e.ParentSessionID, e.ParentToolCallID = t.parent.turn.sess.ID, t.parent.callID
	}
}

// forward hands an event of a subagent's turn to this (the parent's)
// turn's sink, one at a time with the parent's own events.
func (t *turn) forward(e protocol.Event) {
	t.sinkMu.Lock()
	defer t.sinkMu.Unlock()
	if t.sink != nil {
		t.sink(e)
	}
}

//go:embed task.md
var taskDescription string

// taskTool is the task tool of a user's session: the subagent types its
// session may start are frozen into its description and schema.
type taskTool struct {
	defs      []subagent.Definition
	worktrees bool // worktree delegation is available
	info      tools.Info
}

type taskArgs struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	Worktree     bool   `json:"worktree"`
}

// newTaskTool returns the task tool offering the subagent types defs, its
// Info built once.
func newTaskTool(defs []subagent.Definition, worktrees bool) *taskTool {
	tt := &taskTool{defs: defs, worktrees: worktrees}
	tt.info = tools.Info{Name: TaskToolName, Description: tt.description(), Schema: tt.schema(),
		Risk: tools.RiskRead, ConcurrencySafe: true}
	return tt
}

// Info is the task tool with the session's subagent types.
func (tt *taskTool) Info() tools.Info { return tt.info }

// description lists the subagent types after the tool's description.
func (tt *taskTool) description() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(taskDescription))
	b.WriteString("\nTypes:\n")
	for _, d := range tt.defs {
		desc := strings.Join(strings.Fields(d.Description), " ")
		if len(desc) > 600 {
			desc = desc[:600] + "…"
		}
		fmt.Fprintf(&b, "- %s: %s", d.Name, desc)
		b.WriteString("\n")
	}
	if !tt.worktrees {
		b.WriteString("worktree is not available here.\n")
	}
	return b.String()
}

// schema offers the subagent types as an enum.
func (tt *taskTool) schema() json.RawMessage {
	names := make([]string, len(tt.defs))
	for i, d := range tt.defs {
		names[i] = d.Name
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"description":   map[string]any{"type": "string", "minLength": 1, "description": "3-5 words, shown to the user."},
			"prompt":        map[string]any{"type": "string", "minLength": 1},
			"subagent_type": map[string]any{"type": "string", "enum": names},
			"worktree":      map[string]any{"type": "boolean"},
		},
		"required":             []string{"description", "prompt", "subagent_type"},
		"additionalProperties": false,
	}
	raw, _ := json.Marshal(s)
	return raw
}

// ConcurrentCall lets read-only subagents and those in worktrees run
// beside each other; one that writes in the user's tree runs alone.
func (tt *taskTool) ConcurrentCall(args json.RawMessage) bool {
	var a taskArgs
	if json.Unmarshal(args, &a) != nil {
		return false
	}
	d, ok := tt.find(a.SubagentType)
	return ok && (d.ReadOnly || a.Worktree && tt.worktrees)
}

func (tt *taskTool) Summary(args json.RawMessage) string {
	var a taskArgs
	if json.Unmarshal(args, &a) != nil {
		return "Start a subagent"
	}
	s := a.SubagentType + ": " + strings.Join(strings.Fields(a.Description), " ")
	if a.Worktree {
		s += " (worktree)"
	}
	return s
}

// Run refuses: a task call is run by the turn (runTask), which it needs.
func (*taskTool) Run(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, errors.New("the task tool runs only inside an agent turn")
}

func (tt *taskTool) find(name string) (subagent.Definition, bool) {
	for _, d := range tt.defs {
		if d.Name == name {
			return d, true
		}
	}
	return subagent.Definition{}, false
}

// runTask runs task call c: it starts the subagent, waits for its final
// answer and returns it as the call's result. It returns an error only
// for what the model should see as a tool failure, or ctx's when the turn
// is cancelled.
func (t *turn) runTask(tt *taskTool, c *call) (tools.Result, error) {
	var a taskArgs
	if err := json.Unmarshal(c.args, &a); err != nil {
		return tools.Result{}, err
	}
	def, ok := tt.find(a.SubagentType)
	if !ok {
		return tools.Result{}, fmt.Errorf("unknown subagent type %q", a.SubagentType)
	}
	// A bounded number of subagents run at once.
	select {
	case t.subSlots <- struct{}{}:
		defer func() { <-t.subSlots }()
	case <-t.ctx.Done():
		return tools.Result{}, t.ctx.Err()
	}
	ch, err := t.startChild(c.ID, def, a)
	if err != nil {
		return tools.Result{}, err
	}
	return ch.run(a.Prompt)
}

// child is a subagent about to run.
type child struct {
	parent *turn
	sess   *protocol.Session
	link   *parentLink
	tree   *worktree.Tree
	limits SubagentLimits
}

// startChild makes the subagent's session (and worktree): its record,
// tools, editor.
func (t *turn) startChild(callID string, def subagent.Definition, a taskArgs) (*child, error) {
	c := t.core
	ch := &child{parent: t, limits: c.opts.SubagentLimits}
	id := newID()
	workspace := t.ws.Root()
	if a.Worktree {
		if !def.Writes() {
			return nil, fmt.Errorf("%s subagents only read; worktree is for subagents that write", def.Name)
		}
		tree, dir, err := t.makeWorktree(id, def)
		if err != nil {
			return nil, err
		}
		ch.tree, workspace = tree, dir
	}
	model := t.model
	if def.Model != "" {
		m, err := c.opts.Models(def.Model)
		if err != nil {
			ch.cleanup(t.bg)
			return nil, fmt.Errorf("subagent %s wants model %s: %w", def.Name, def.Model, err)
		}
		model = m
	}
	now := c.opts.Now().UTC()
	title := strings.Join(strings.Fields(a.Description), " ")
	ch.sess = &protocol.Session{ID: id, Title: titleOf(title), Workspace: workspace, Model: model.ID,
		Status: protocol.StatusIdle, ParentID: t.sess.ID, Agent: def.Name, CreatedAt: now, UpdatedAt: now}
	ch.link = &parentLink{turn: t, callID: callID, def: def, prompt: subagentPrompt(def, ch.tree, t.ws.Root())}
	e := protocol.Event{Type: protocol.EventSessionCreated, SessionID: id, Model: model.ID, Session: ch.sess,
		Timestamp: now, ParentSessionID: t.sess.ID, ParentToolCallID: callID}
	if err := c.opts.Store.AppendBatch(t.bg, id, store.Batch{NewSession: ch.sess, Events: []*protocol.Event{&e}}); err != nil {
		ch.cleanup(t.bg)
		return nil, fmt.Errorf("create subagent session: %w", err)
	}
	t.forward(e)
	reg := t.childTools(def)
	c.mu.Lock()
	if c.registries == nil {
		c.registries = make(map[string]*tools.Registry)
	}
	c.registries[id] = reg
	c.mu.Unlock()
	if ch.tree == nil {
		// In the user's tree it edits through the user's editor, as its
		// parent does.
		if ed := c.editor(t.sess.ID); ed != nil {
			c.editors.Store(id, ed)
		}
	}
	return ch, nil
}

// childTools returns the tools a subagent of type def gets: its parent's,
// less the parent-only ones, those its definition leaves out and, for a
// read-only type, those that change anything.
func (t *turn) childTools(def subagent.Definition) *tools.Registry {
	var keep []string
	for _, tl := range t.tools.Tools() {
		info := tl.Info()
		n := info.Name
		if slices.Contains(parentOnly, n) || !def.Allows(n) || def.ReadOnly && info.Risk != tools.RiskRead {
			continue
		}
		keep = append(keep, n)
	}
	return t.tools.Only(keep...)
}

// branchName makes a branch name part of a subagent type's name.
var branchUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// makeWorktree makes the worktree a writing subagent works in and
// returns it with the subagent's workspace in it (the same subfolder of
// the repository as the parent's workspace).
func (t *turn) makeWorktree(id string, def subagent.Definition) (*worktree.Tree, string, error) {
	c := t.core
	if c.opts.Worktrees == "" {
		return nil, "", errors.New("worktree delegation is not available in this process")
	}
	repo, err := worktree.RepoRoot(t.ctx, t.ws.Root())
	if err != nil {
		return nil, "", fmt.Errorf("worktree: the workspace is not in a git repository: %w", err)
	}
	branch := worktree.BranchPrefix + strings.Trim(branchUnsafe.ReplaceAllString(def.Name, "-"), "-") + "-" + id[:8]
	tree, err := worktree.Create(t.ctx, repo, filepath.Join(c.opts.Worktrees, id), branch)
	if err != nil {
		return nil, "", err
	}
	dir := tree.Dir
	if rel, err := filepath.Rel(repo, t.ws.Root()); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		dir = filepath.Join(tree.Dir, rel)
	}
	return tree, dir, nil
}

// cleanup removes what startChild made when the subagent cannot run.
func (ch *child) cleanup(ctx context.Context) {
	if ch.tree != nil {
		_, _ = ch.tree.Finish(ctx, "subagent did not start")
	}
}

// subagentPrompt is what a subagent's system prompt says beyond the
// usual: its instructions, and where it works.
func subagentPrompt(def subagent.Definition, tree *worktree.Tree, userTree string) string {
	var b strings.Builder
	b.WriteString("# Subagent\n\n")
	fmt.Fprintf(&b, "You are a %s subagent started by another agent through its task tool. Your task is in the user message; "+
		"you cannot ask anyone questions. Your final answer (your last message without tool calls) is returned to that agent as the task's result.\n", def.Name)
	if tree != nil {
		fmt.Fprintf(&b, "\nYou work in a separate git worktree on the branch %s, made from commit %s; the user's own tree (%s) is not yours to touch. "+
			"Do not commit: when you finish, your changes are committed onto the branch for you.\n", tree.Branch, shortCommit(tree.Base), userTree)
	}
	if p := strings.TrimSpace(def.Prompt); p != "" {
		b.WriteString("\n" + p + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// run runs the subagent's turn and makes its result.
func (ch *child) run(prompt string) (tools.Result, error) {
	p, c := ch.parent, ch.parent.core
	defer c.forget(ch.sess.ID)
	maxIter := ch.limits.MaxIterations
	if ch.link.def.MaxTurns > 0 {
		maxIter = ch.link.def.MaxTurns
	}
	onAsk := p.onAsk
	if onAsk == AskPause {
		// A subagent cannot pause inside its parent's call: its
		// approvals are answered while it waits, or denied.
		onAsk = AskDeny
	}
	var budget Budget
	if ch.limits.MaxTokens > 0 {
		budget.MaxTokens = ch.limits.MaxTokens
	}
	if d := ch.limits.MaxDuration; d > 0 {
		// A deadline on the subagent's turn (see withTimeBudget).
		budget.MaxDuration = d
	}
	var answer string
	sink := func(e protocol.Event) {
		if e.Type == protocol.EventMessageCompleted && e.Message != nil && e.Message.Role == protocol.RoleAssistant {
			answer = e.Message.Content
		}
		p.forward(e)
	}
	var ct *turn
	setup := turnSetup{sessionID: ch.sess.ID, maxIter: maxIter, onAsk: onAsk, budget: budget, parent: ch.link}
	err := c.drive(p.ctx, setup, sink, func(t *turn) error {
		ct = t
		return t.run(prompt)
	})
	var wt *worktree.Result
	var wtErr error
	if ch.tree != nil {
		wt, wtErr = ch.tree.Finish(p.bg, "mx-claw "+ch.link.def.Name+" subagent: "+ch.sess.Title)
	}
	if p.ctx.Err() != nil {
		// The parent's turn is cancelled; its call gets the usual result.
		return tools.Result{}, p.ctx.Err()
	}
	var b strings.Builder
	isErr := false
	var maxIterErr *MaxIterationsError
	var budgetErr *BudgetError
	var loop *LoopError
	switch {
	case err == nil:
		b.WriteString(strings.TrimSpace(answer))
		if strings.TrimSpace(answer) == "" {
			b.WriteString("(The subagent finished without a final answer.)")
		}
	case errors.As(err, &maxIterErr), errors.As(err, &budgetErr), errors.As(err, &loop):
		isErr = true
		fmt.Fprintf(&b, "The %s subagent stopped before finishing: %v.", ch.link.def.Name, err)
		if a := strings.TrimSpace(answer); a != "" {
			b.WriteString("\nIts last message:\n" + a)
		}
	case ct == nil:
		// It never ran: a refusal before the turn (no model, a lease).
		return tools.Result{}, fmt.Errorf("subagent %s: %w", ch.link.def.Name, err)
	default:
		isErr = true
		fmt.Fprintf(&b, "The %s subagent failed: %v.", ch.link.def.Name, err)
	}
	b.WriteString("\n\n")
	if wt != nil && wt.Changed() {
		fmt.Fprintf(&b, "Its changes are on branch %s (from %s), not in the user's tree:\n%s\n"+
			"Bring them into the user's tree with merge_worktree once the user agrees.\n\n",
			wt.Branch, shortCommit(wt.Base), strings.TrimRight(wt.Stat, "\n"))
	} else if ch.tree != nil && wtErr == nil {
		b.WriteString("It changed no files in its worktree.\n\n")
	}
	if wtErr != nil {
		fmt.Fprintf(&b, "Its worktree could not be committed: %v\n\n", wtErr)
	}
	steps, tokens := 0, int64(0)
	if ct != nil {
		steps, tokens = ct.step, ct.usage.InputTokens+ct.usage.OutputTokens
	}
	fmt.Fprintf(&b, "[%s subagent, session %s: %d steps, %d tokens]", ch.link.def.Name, ch.sess.ID, min(steps, maxIter), tokens)
	return tools.Result{Content: b.String(), IsError: isErr}, nil
}

// forget drops what this process keeps about a subagent's session once
// its only turn is over.
func (c *Core) forget(sessionID string) {
	c.mu.Lock()
	delete(c.registries, sessionID)
	delete(c.files, sessionID)
	delete(c.estimateCaches, sessionID)
	delete(c.started, sessionID)
	c.mu.Unlock()
	c.editors.Delete(sessionID)
}
