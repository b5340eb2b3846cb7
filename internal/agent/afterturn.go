package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/store"
)

// Post-turn observers (DESIGN §3): after a turn completes, the user's
// message is searched for explicit requests to remember (each kept as a
// candidate a person reviews), and a turn that did real work through
// tools may be turned into a proposed skill. Both only propose; neither
// ever fails the turn: their errors become warnings or log lines.
//
// A proposal needs a model request, so it runs in the background after
// turn.completed is recorded and sent: the user never waits for it. It
// uses the session's model and counts against the session's budget: it is
// not asked for when the session's token or cost cap would not cover it,
// and its usage is added to the session afterwards (recordBackground).
// WaitBackground lets a process that is about to exit finish it.

// DefaultMinProposalCalls is how many tool calls a turn needs, all of its
// last step's having succeeded, before a skill is proposed from it.
const DefaultMinProposalCalls = 4

// proposalTimeout bounds a proposal's model request; proposalMaxTokens
// caps its answer.
const (
	proposalTimeout   = 2 * time.Minute
	proposalMaxTokens = 2000
)

// rememberRequests returns a memory.candidate event for each request to
// remember in the turn's user message, kept by Options.Remember. A
// failure is a warning event.
func (t *turn) rememberRequests() []protocol.Event {
	if t.core.opts.Remember == nil || t.user == nil {
		return nil
	}
	cands, err := t.core.opts.Remember(t.bg, t.sess, t.user, t.typed)
	var evs []protocol.Event
	if err != nil {
		evs = append(evs, protocol.Event{Type: protocol.EventWarning, Step: t.step,
			Text: "a request to remember could not be kept: " + err.Error()})
	}
	for i := range cands {
		evs = append(evs, protocol.Event{Type: protocol.EventMemoryCandidate, Candidate: &cands[i], Step: t.step})
	}
	return evs
}

// trajectory returns the turn's tool calls, if the turn is worth a skill:
// at least MinProposalCalls calls, every call of its last tool step
// succeeded, and it did not load a skill (a procedure a skill already
// covers is not learned again).
func (t *turn) trajectory() (skills.Trajectory, bool) {
	min := t.core.opts.MinProposalCalls
	if min <= 0 {
		min = DefaultMinProposalCalls
	}
	if t.user == nil {
		return skills.Trajectory{}, false
	}
	start := -1
	for i := range t.history {
		if t.history[i].Seq == t.user.Seq {
			start = i
			break
		}
	}
	if start < 0 {
		return skills.Trajectory{}, false
	}
	tr := skills.Trajectory{SessionID: t.sess.ID, TurnID: t.id, Workspace: t.ws.Root(), Model: t.model.ID,
		Request: t.request, CreatedAt: t.core.opts.Now().UTC()}
	results := make(map[string]*protocol.Message)
	for i := start + 1; i < len(t.history); i++ {
		if m := &t.history[i]; m.Role == protocol.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	lastStepOK := false
	for i := start + 1; i < len(t.history); i++ {
		m := &t.history[i]
		if m.Role != protocol.RoleAssistant {
			continue
		}
		if len(m.ToolCalls) == 0 {
			tr.Answer = m.Content
			continue
		}
		lastStepOK = true
		for _, c := range m.ToolCalls {
			res := results[c.ID]
			ok := res != nil && !res.IsError
			if c.Name == skills.ToolName && ok {
				return skills.Trajectory{}, false
			}
			lastStepOK = lastStepOK && ok
			s := skills.Step{Tool: c.Name, Arguments: c.Arguments, OK: ok}
			if res != nil {
				s.Result = res.Content
			}
			tr.Steps = append(tr.Steps, s)
		}
	}
	return tr, len(tr.Steps) >= min && lastStepOK
}

// proposeSkill asks, in the background, for a skill learned from the
// turn, if proposals are on and the turn is worth one.
func (t *turn) proposeSkill() {
	c := t.core
	if c.opts.ProposeSkill == nil {
		return
	}
	tr, ok := t.trajectory()
	if !ok {
		return
	}
	system, user := skills.ProposalPrompt(tr)
	if why := t.proposalOverBudget(system + user); why != "" {
		c.log.Info("no skill proposal: the session's budget would not cover it", "session", t.sess.ID, "why", why)
		return
	}
	model, sessionID, turnID := t.model, t.sess.ID, t.id
	c.bgWG.Add(1)
	go func() {
		defer c.bgWG.Done()
		c.runProposal(model, sessionID, turnID, tr, system, user)
	}()
}

// proposalOverBudget says which of the session's caps a proposal request
// of about prompt would pass, or "".
func (t *turn) proposalOverBudget(prompt string) string {
	b := t.budget
	in := int64(catalog.Estimate(prompt))
	if b.MaxSessionTokens > 0 && t.sess.Usage.InputTokens+t.sess.Usage.OutputTokens+in+proposalMaxTokens > b.MaxSessionTokens {
		return "session tokens"
	}
	if b.MaxSessionCostUSD > 0 && t.core.opts.Catalog != nil {
		usd, known := catalog.Cost(t.core.opts.Catalog(t.model.ID), protocol.Usage{InputTokens: in, OutputTokens: proposalMaxTokens})
		if known && t.sess.CostUSD+usd > b.MaxSessionCostUSD {
			return "session cost"
		}
	}
	return ""
}

// runProposal asks the model for a skill and hands its answer to
// Options.ProposeSkill; the request's usage and the proposal's event are
// recorded with the session.
func (c *Core) runProposal(model Model, sessionID, turnID string, tr skills.Trajectory, system, user string) {
	ctx, cancel := context.WithTimeout(c.bgCtx, proposalTimeout)
	defer cancel()
	req := c.limitRequest(&llm.Request{Model: model.Name, MaxTokens: proposalMaxTokens, Messages: []llm.Message{
		{Role: string(protocol.RoleSystem), Content: system}, {Role: string(protocol.RoleUser), Content: user}}})
	resp, err := model.Client.Stream(ctx, req, nil)
	if err != nil {
		c.log.Warn("skill proposal request failed", "session", sessionID, "err", err)
		return
	}
	var evs []protocol.Event
	if resp.HasUsage {
		u := protocol.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
			CachedTokens: resp.Usage.CachedTokens, ReasoningTokens: resp.Usage.ReasoningTokens}
		ue := protocol.Event{Type: protocol.EventUsage, Usage: &u, Text: "skill proposal"}
		if c.opts.Catalog != nil {
			if usd, ok := catalog.Cost(c.opts.Catalog(model.ID), u); ok {
				ue.CostUSD = &usd
			}
		}
		evs = append(evs, ue)
	}
	p, err := c.opts.ProposeSkill(ctx, tr, resp.Text)
	switch {
	case errors.Is(err, skills.ErrNoProposal), errors.Is(err, skills.ErrExists):
		c.log.Info("no skill proposed", "session", sessionID, "why", err)
	case err != nil:
		c.log.Warn("keep skill proposal", "session", sessionID, "err", err)
	case p != nil:
		p.TurnID = turnID
		evs = append(evs, protocol.Event{Type: protocol.EventSkillProposed, Proposal: p,
			Text: fmt.Sprintf("proposed skill %s; review it with `mx-claw skills proposed`", p.Name)})
	}
	if len(evs) == 0 {
		return
	}
	// Recording waits for a turn of the session that runs meanwhile,
	// however long; only the process's end stops it.
	if err := c.recordBackground(c.bgCtx, sessionID, turnID, evs); err != nil {
		c.log.Warn("record skill proposal", "session", sessionID, "err", err)
	}
}

// recordBackground stores events of background work on a session — the
// usage of a request among them is added to the session's totals — as
// the session's one writer: it waits for this process's turn on the
// session, if one runs, and takes the session's lease.
func (c *Core) recordBackground(ctx context.Context, sessionID, turnID string, evs []protocol.Event) error {
	if err := c.claimBackground(ctx, sessionID); err != nil {
		return err
	}
	defer c.unclaimBackground(sessionID)
	st := c.opts.Store
	for {
		_, err := st.AcquireLease(ctx, sessionID, c.opts.Owner, c.opts.LeaseTTL)
		if err == nil {
			break
		}
		var held *store.LeaseHeldError
		if !errors.As(err, &held) {
			return err
		}
		// Another process runs a turn on the session: wait for it.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer func() {
		if err := st.ReleaseLease(context.WithoutCancel(ctx), sessionID, c.opts.Owner); err != nil {
			c.log.Warn("release lease", "session", sessionID, "err", err)
		}
	}()
	sess, err := st.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	now := c.opts.Now().UTC()
	b := store.Batch{}
	for i := range evs {
		e := &evs[i]
		e.SessionID, e.TurnID, e.Timestamp = sessionID, turnID, now
		if e.Type == protocol.EventUsage && e.Usage != nil {
			sess.Usage.Add(*e.Usage)
			if e.CostUSD != nil {
				sess.CostUSD += *e.CostUSD
			}
			b.UpdateSession = sess
		}
		b.Events = append(b.Events, e)
	}
	return st.AppendBatch(ctx, sessionID, b)
}

// WaitBackground waits for the background work of finished turns (skill
// proposals) until it is done or ctx ends; then it stops what is left and
// waits for it to stop. A process calls it before it exits.
func (c *Core) WaitBackground(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		c.bgWG.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		c.bgCancel()
		<-done
	}
}
