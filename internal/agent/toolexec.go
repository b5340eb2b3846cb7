package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// DuplicateCallResult is the result of a call identical to an earlier one
// of the same turn.
const DuplicateCallResult = "Duplicate tool call rejected; use the previous result instead."

// CancelledCallResult is the result of a call the turn stopped before or
// while it ran.
const CancelledCallResult = "Tool failed: the turn was cancelled before this call finished."

// previewBytes caps the result preview carried by tool.completed.
const previewBytes = 240

// call is one tool call on its way through checks and execution.
type call struct {
	protocol.ToolCall
	tool    tools.Tool
	args    json.RawMessage
	summary string
	// early is the result decided before running (unknown tool,
	// duplicate, invalid arguments, a hook's block); empty if the call is
	// to run.
	early string
	// hook is the PreToolUse hooks' permission decision.
	hook hooks.Decision
	// context is what PreToolUse hooks want the model to know with the
	// result.
	context string
	// before is what the files the call writes held before it ran, for
	// its PostToolUse hooks.
	before *hooks.Snapshot
}

// prepare does everything before execution: look up, duplicate check,
// JSON parse, schema validation, human summary.
func (t *turn) prepare(tc protocol.ToolCall) *call {
	c := &call{ToolCall: tc}
	if r := t.tooLargeResult(tc); r != "" {
		c.early, c.summary = r, tc.Name
		return c
	}
	reg := t.tools
	tool, ok := reg.Lookup(tc.Name)
	if !ok {
		names := make([]string, 0, len(reg.Tools()))
		for _, tl := range reg.Tools() {
			names = append(names, tl.Info().Name)
		}
		c.early = fmt.Sprintf("Tool failed: unknown tool %q. Available tools: %s.", tc.Name, strings.Join(names, ", "))
		c.summary = tc.Name
		return c
	}
	c.tool = tool
	c.summary = tc.Name
	key := dupKey(tc)
	if t.seen[key] {
		c.early = DuplicateCallResult
		t.noteRepeat(tc.Name, key)
		return c
	}
	t.seen[key] = true
	args := json.RawMessage(tc.Arguments)
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := reg.Validate(tc.Name, args); err != nil {
		c.early = "Tool failed: " + err.Error()
		return c
	}
	c.args = args
	c.summary = tool.Summary(args)
	c.hook = t.preToolUse(c)
	return c
}

// Loop detection: the same call this many times within this many steps
// stops the turn.
const (
	loopTimes = 5
	loopSteps = 10
)

// noteRepeat records a repeated call and flags a loop when the model keeps
// making it.
func (t *turn) noteRepeat(tool, key string) {
	if t.repeats == nil {
		t.repeats = make(map[string][]int)
	}
	steps := append(t.repeats[key], t.step)
	// Keep the steps within the window.
	for len(steps) > 0 && steps[0] <= t.step-loopSteps {
		steps = steps[1:]
	}
	t.repeats[key] = steps
	// The first call is not in the list: it was allowed.
	if len(steps)+1 >= loopTimes && t.looping == nil {
		t.looping = &LoopError{Tool: tool, Times: len(steps) + 1, Steps: loopSteps}
	}
}

// dupKey identifies a call by tool and arguments, ignoring JSON formatting.
func dupKey(tc protocol.ToolCall) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(tc.Arguments)); err != nil {
		return tc.Name + "\x00" + tc.Arguments
	}
	return tc.Name + "\x00" + buf.String()
}

// runCalls runs the calls of one response and stores their results. When
// every call only reads — a known, valid call of a read-only,
// concurrency-safe tool, or a command the classifier judges read-only —
// and the policy allows each without asking, the batch runs in parallel
// (bounded); otherwise serially in the model's order, each call decided
// just before it runs. Safety is decided per call, not per tool: `sleep 1;
// echo a` three times runs at once, `go test` does not. A call that needs
// approval is denied or pauses the turn, as t.onAsk says.
func (t *turn) runCalls(tcs []protocol.ToolCall) error {
	start := time.Now()
	defer func() { t.toolTime += time.Since(start) }()
	calls := make([]*call, len(tcs))
	parallel := len(tcs) > 1
	dups := 0
	for i, tc := range tcs {
		calls[i] = t.prepare(tc)
		c := calls[i]
		if c.early != "" || !readOnly(c) && !maybeReadOnly(c) {
			parallel = false
		}
		if c.early == DuplicateCallResult {
			dups++
		}
	}
	if dups > 0 && dups == len(calls) {
		// A step whose every call was rejected as a duplicate did no
		// work: it does not count against the iteration budget (the
		// loop detector stops a model that keeps doing it).
		t.freeSteps++
	}
	decisions := make([]*permission.Decision, len(calls))
	if parallel {
		for i, c := range calls {
			d := t.decide(c)
			decisions[i] = &d
			if d.Action != permission.Allow || !readOnly(c) && !d.ReadOnly() {
				parallel = false
			}
		}
	}
	if parallel {
		return t.runParallel(calls)
	}
	for i, c := range calls {
		if err := t.ctx.Err(); err != nil {
			return t.cancelRest(calls[i:], err)
		}
		if c.early == "" && t.hk.isHalted() {
			c.early = HaltedCallResult
		}
		if c.early != "" {
			if err := t.storeResult(c, outcome{content: c.early, isError: true}); err != nil {
				return err
			}
			continue
		}
		d := decisions[i]
		if d == nil {
			dd := t.decide(c)
			d = &dd
		}
		if d.Action == permission.Ask {
			dd := t.permissionRequest(c, *d)
			d = &dd
		}
		var res outcome
		switch d.Action {
		case permission.Allow:
			var err error
			if res, err = t.execute(c); err != nil {
				return err
			}
		case permission.Ask:
			switch t.onAsk {
			case AskPause:
				return t.pause(c, *d, calls[i+1:])
			case AskWait:
				var err error
				if res, err = t.wait(c, *d, calls[i+1:]); err != nil {
					if t.ctx.Err() != nil {
						return t.cancelRest(calls[i:], err)
					}
					return err
				}
			default:
				res = outcome{content: unansweredResult(c, *d), isError: true}
			}
		default:
			res = outcome{content: deniedResult(*d), isError: true}
		}
		if err := t.storeResult(c, res); err != nil {
			return err
		}
	}
	return nil
}

// outcome is a finished call's result.
type outcome struct {
	content  string
	isError  bool
	duration time.Duration
	images   []protocol.Image
	// changes are the workspace files the call changed, as its
	// checkpoints saw them.
	changes []protocol.FileChange
}

// execute runs one prepared, allowed call, emitting tool.started. It
// returns an error only when the turn must stop.
func (t *turn) execute(c *call) (outcome, error) {
	started := t.startedEvent(c)
	if !readOnly(c) || startsAfterStarted(c) {
		if err := t.emit(started); err != nil {
			return outcome{}, err
		}
		cp := t.checkpointBefore(c)
		o := t.invoke(c)
		o.changes = t.checkpointAfter(cp)
		return o, nil
	}
	// A read-only call changes nothing, so it runs while its tool.started
	// (with the answer that asked for it) is being stored; only its result
	// waits for that.
	ran := make(chan ranCall, 1)
	go func() { ran <- t.runTool(c) }()
	err := t.emit(started)
	r := <-ran
	if err != nil {
		return outcome{}, err
	}
	return t.after(c, r), nil
}

// readOnly reports whether c's tool only reads and may run alongside
// anything: what may run in parallel batches, and before its tool.started
// is stored.
func readOnly(c *call) bool {
	if c.tool == nil {
		return false
	}
	info := c.tool.Info()
	if info.Risk != tools.RiskRead || !info.ConcurrencySafe {
		return false
	}
	if cc, ok := c.tool.(tools.CallConcurrency); ok {
		return c.args != nil && cc.ConcurrentCall(c.args)
	}
	return true
}

// maybeReadOnly reports whether c is a command that may prove read-only
// once decided (see permission.Decision.ReadOnly): it still runs through
// the session's sandbox like any command.
func maybeReadOnly(c *call) bool {
	return c.tool != nil && c.Name == permission.CommandTool
}

// startsAfterStarted reports whether c runs only once its tool.started is
// stored: a task call, whose subagent's events must come after it, and a
// command, whose tool.output events must.
func startsAfterStarted(c *call) bool {
	_, task := c.tool.(*taskTool)
	return task || maybeReadOnly(c)
}

// startedEvent is c's tool.started.
func (t *turn) startedEvent(c *call) protocol.Event {
	return protocol.Event{Type: protocol.EventToolStarted, ToolCallID: c.ID, ToolName: c.Name,
		Arguments: protocol.RawJSON(c.Arguments), Summary: c.summary, Step: t.step}
}

// invoke runs the tool and its PostToolUse hooks. It is safe to call from
// several goroutines at once for concurrency-safe tools.
func (t *turn) invoke(c *call) outcome {
	return t.after(c, t.runTool(c))
}

// ranCall is a call's outcome before its PostToolUse hooks.
type ranCall struct {
	outcome
	cancelled bool
}

// runTool runs the tool alone.
func (t *turn) runTool(c *call) ranCall {
	env := &tools.Env{Workspace: t.ws, SessionID: t.sess.ID, Files: t.files, Hidden: t.hidden(c),
		Commands: t.cmds, CallID: c.ID, Outputs: t.core.outputFiles(t.sess.ID), Editor: t.core.editor(t.sess.ID)}
	env.History = func() ([]protocol.Message, error) {
		return t.core.opts.Store.Messages(t.bg, t.sess.ID, 0)
	}
	env.SetTodos = func(todos []protocol.Todo) {
		if err := t.emit(protocol.Event{Type: protocol.EventTodoUpdated, ToolCallID: c.ID, Todos: todos, Step: t.step}); err != nil {
			t.core.log.Warn("store todo list", "session", t.sess.ID, "err", err)
		}
	}
	env.Output = t.outputStream(c)
	env.CommandSetup = t.commandSetup()
	if p := t.policy; p != nil {
		env.TrustedHost = p.NamesHost
	}
	env.Jobs = t.core.opts.Jobs
	env.Images = t.readsImages()
	t.snapshot(c)
	start := time.Now()
	after := t.diagnose(c)
	res, err := callTool(t, c, env)
	if after != nil && err == nil && !res.IsError && t.ctx.Err() == nil {
		if note := after(t.ctx); note != "" {
			res.Content = strings.TrimRight(res.Content, "\n") + "\n\n" + note
		}
	}
	d := time.Since(start)
	switch {
	case t.ctx.Err() != nil:
		return ranCall{outcome{content: CancelledCallResult, isError: true, duration: d}, true}
	case err != nil:
		return ranCall{outcome: outcome{content: "Tool failed: " + err.Error(), isError: true, duration: d}}
	}
	return ranCall{outcome: outcome{content: res.Content, isError: res.IsError, duration: d, images: res.Images}}
}

// after runs the PostToolUse hooks of a call that ran to its end.
func (t *turn) after(c *call, r ranCall) outcome {
	if r.cancelled {
		return r.outcome
	}
	return t.postToolUse(c, r.outcome)
}

// callTool calls the tool, turning a panic into an error so one broken tool
// cannot take the session down with it.
func callTool(t *turn, c *call, env *tools.Env) (res tools.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in %s: %v", c.Name, r)
		}
	}()
	if tt, ok := c.tool.(*taskTool); ok {
		return t.runTask(tt, c)
	}
	return c.tool.Run(t.ctx, env, c.args)
}

// storeResult stores a call's result, adds it to the view and emits
// tool.completed.
func (t *turn) storeResult(c *call, o outcome) error {
	if err := t.recordResult(c, o); err != nil {
		return err
	}
	t.view = append(t.view, llm.Message{Role: string(protocol.RoleTool), Content: o.content, ToolCallID: c.ID, Images: llmImages(o.images)})
	return nil
}

// recordResult stores a call's result with its tool.completed event. It
// does not touch the view, so tool goroutines' results can be recorded as
// they complete.
func (t *turn) recordResult(c *call, o outcome) error {
	msg := protocol.Message{Role: protocol.RoleTool, Content: o.content, ToolCallID: c.ID, ToolName: c.Name, IsError: o.isError, Images: o.images}
	ok := !o.isError
	e := protocol.Event{Type: protocol.EventToolCompleted, ToolCallID: c.ID,
		ToolName: c.Name, Summary: c.summary, OK: &ok, Preview: preview(o.content),
		DurationMS: o.duration.Milliseconds(), Message: msg.WithoutImageData(), Step: t.step, Changes: o.changes}
	if len(o.changes) > 0 {
		return t.recordChanges([]*protocol.Message{&msg}, o.changes, e)
	}
	return t.record([]*protocol.Message{&msg}, e)
}

// cancelRest stores a cancellation result for calls that never ran and
// returns cause.
func (t *turn) cancelRest(calls []*call, cause error) error {
	for _, c := range calls {
		if err := t.storeResult(c, outcome{content: CancelledCallResult, isError: true}); err != nil {
			return err
		}
	}
	return cause
}

// runParallel runs a batch of read-only calls at once, at most MaxParallel
// at a time (read-only commands among them). Each result is stored as it completes; the view gets them in
// call order once all are done, as repairView would order them.
func (t *turn) runParallel(calls []*call) error {
	started := make([]protocol.Event, len(calls))
	for i, c := range calls {
		started[i] = t.startedEvent(c)
	}
	type done struct {
		i int
		o outcome
	}
	results := make(chan done, len(calls))
	sem := make(chan struct{}, t.core.opts.MaxParallel)
	// The calls only read: they run while their tool.started events are
	// stored; their hooks and results wait for that.
	stored := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if startsAfterStarted(c) {
				<-stored
			}
			sem <- struct{}{}
			r := t.runTool(c)
			<-sem
			<-stored
			results <- done{i, t.after(c, r)}
		}()
	}
	err := t.record(nil, started...)
	close(stored)
	go func() { wg.Wait(); close(results) }()
	if err != nil {
		for range results {
		}
		return err
	}

	outs := make([]outcome, len(calls))
	var firstErr error
	for d := range results {
		outs[d.i] = d.o
		if firstErr != nil {
			continue
		}
		if err := t.recordResult(calls[d.i], d.o); err != nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	for i, c := range calls {
		t.view = append(t.view, llm.Message{Role: string(protocol.RoleTool), Content: outs[i].content, ToolCallID: c.ID, Images: llmImages(outs[i].images)})
	}
	return nil
}

// preview returns the start of a result for tool.completed.
func preview(s string) string {
	if len(s) <= previewBytes {
		return s
	}
	cut := previewBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
