package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/compact"
	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ErrNothingToCompact is returned by Compact when the session's view has
// nothing older than what must be kept verbatim.
var ErrNothingToCompact = errors.New("nothing to compact")

// outputReserve is the room a request leaves for the answer.
func outputReserve(m catalog.Model) int {
	r := m.MaxOutput
	if r <= 0 || r > m.ContextWindow/4 {
		r = m.ContextWindow / 4
	}
	return r
}

// contextOn reports whether the turn manages its context (a catalog is
// configured): then the view is projected from the transcript and its
// compactions before every request.
func (t *turn) contextOn() bool { return t.core.opts.Catalog != nil }

// loadContext prepares the turn's context management: the per-message
// token estimates of the transcript and its compaction records.
func (t *turn) loadContext(history []protocol.Message) error {
	t.history = history
	if !t.contextOn() {
		return nil
	}
	// Each stored message is estimated once per process: later turns of
	// the session take the estimates from the Core's cache.
	t.counts = make([]int, len(history))
	cache := t.core.estimates(t.sess.ID)
	for i := range history {
		m := &history[i]
		n, ok := cache.get(m.Seq)
		if !ok {
			n = catalog.EstimateMessage(m)
			cache.put(m.Seq, n)
		}
		t.counts[i] = n
	}
	stored, err := t.core.opts.Store.Compactions(t.bg, t.sess.ID)
	if err != nil {
		return err
	}
	rewinds, err := t.core.opts.Store.Rewinds(t.bg, t.sess.ID)
	if err != nil {
		return err
	}
	stored = liveCompactions(stored, rewinds)
	for _, c := range stored {
		t.records = append(t.records, compact.Record{ID: c.ID, UpToSeq: c.UpToSeq, Summary: c.Summary,
			Ledger: c.Ledger, CreatedAt: c.CreatedAt, Trigger: c.Trigger, Instructions: c.Instructions})
	}
	t.pinnedTokens()
	return nil
}

// pinnedTokens estimates the summary message of the latest record once.
func (t *turn) pinnedTokens() {
	t.pinned = 0
	if n := len(t.records); n > 0 {
		m := compact.SummaryMessage(&t.records[n-1], t.records[n-1].Ledger)
		t.pinned = catalog.EstimateMessage(&m)
	}
}

// remember adds stored messages to the turn's transcript and estimates.
func (t *turn) remember(msgs []*protocol.Message) {
	for _, m := range msgs {
		t.history = append(t.history, *m)
		if t.contextOn() {
			n := catalog.EstimateMessage(m)
			t.counts = append(t.counts, n)
			t.core.estimates(t.sess.ID).put(m.Seq, n)
		}
	}
}

// estimateCache keeps the token estimates of a session's stored messages
// by Seq. It is safe for concurrent use.
type estimateCache struct {
	mu    sync.Mutex
	bySeq map[int64]int
}

func (c *estimateCache) get(seq int64) (int, bool) {
	if seq <= 0 {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.bySeq[seq]
	return n, ok
}

func (c *estimateCache) put(seq int64, n int) {
	if seq <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySeq == nil {
		c.bySeq = make(map[int64]int)
	}
	c.bySeq[seq] = n
}

func (t *turn) latest() *compact.Record {
	if n := len(t.records); n > 0 {
		return &t.records[n-1]
	}
	return nil
}

// estimator weighs messages: stored ones from the per-message cache, new
// ones (Seq 0, made by the projection) afresh.
func (t *turn) estimator() compact.Estimator {
	// The transcript is in Seq order: look a stored message up by binary
	// search rather than building an index per request.
	history, counts := t.history, t.counts
	return func(m *protocol.Message) int {
		if m.Seq > 0 {
			i := sort.Search(len(history), func(i int) bool { return history[i].Seq >= m.Seq })
			if i < len(history) && history[i].Seq == m.Seq {
				return counts[i]
			}
		}
		return catalog.EstimateMessage(m)
	}
}

// prepareView builds the view for the next request: compacts first when
// the projected view would pass the threshold, then projects the
// transcript through its compactions and cuts huge tool results.
func (t *turn) prepareView(specs []llm.Tool) error {
	if !t.contextOn() {
		return nil
	}
	m := t.capWindow(t.core.opts.Catalog(t.model.ID))
	// Estimates are corrected by what the provider reported for earlier
	// requests: the window is scaled by the observed ratio.
	cal := t.core.calibrator(t.model.ID)
	window := m.ContextWindow
	if r := cal.Ratio(); r > 0 {
		window = int(float64(window) / r)
	}
	threshold := t.core.opts.CompactThreshold
	if threshold <= 0 {
		threshold = compact.DefaultThreshold
	}
	// What lies above the threshold is room for the answer: only the part
	// of the output reserve beyond it counts against the threshold.
	// Counting it whole made a small window compact twice as often.
	reserve := outputReserve(m)
	overhead := t.specTokens(specs) + max(0, reserve-int((1-threshold)*float64(window)))
	cut, due := compact.PlanCounts(t.history, t.counts, compact.Options{Window: window,
		Threshold: threshold, Overhead: overhead, Previous: t.latest(), PinnedTokens: t.pinned})
	dropped := false
	switch {
	case due && t.compactFailed:
		// Summarising failed earlier in this turn: do not ask again on
		// every step; keep dropping old turns from the view instead.
		dropped = true
	case due:
		if err := t.compact(cut, m, compact.TriggerAuto, ""); err != nil {
			if t.ctx.Err() != nil {
				return t.ctx.Err()
			}
			// Summarising failed: fall back to dropping whole old turns
			// from the view, and say so.
			t.tell(protocol.Event{Type: protocol.EventWarning, Step: t.step,
				Text: "compaction failed (" + err.Error() + "); dropping the oldest turns from the model's view instead"})
			t.compactFailed = true
			dropped = true
		}
	}
	est := t.estimator()
	ledger := ""
	if r := t.latest(); r != nil {
		ledger = r.Ledger
	}
	view := compact.CapToolResults(compact.Project(t.history, t.records, ledger), m.ContextWindow, 0, est)
	if dropped || t.windowCap > 0 {
		note := compact.Ledger(t.history, nil, t.ledgerOptions(m))
		view, _ = compact.DropOldest(view, m.ContextWindow-reserve-t.specTokens(specs), est, note)
	}
	t.view = t.view[:0]
	t.viewEstimate = t.specTokens(specs)
	for i := range view {
		t.view = append(t.view, toLLM(&view[i]))
		t.viewEstimate += est(&view[i])
	}
	return nil
}

// observe feeds the provider's count of a request's prompt tokens to the
// model's calibrator.
func (t *turn) observe(u llm.Usage) {
	if t.contextOn() && t.viewEstimate > 0 && u.InputTokens > 0 {
		t.core.calibrator(t.model.ID).Observe(t.viewEstimate, int(u.InputTokens))
	}
}

// specTokens estimates the tool schemas sent with every request, once.
func (t *turn) specTokens(specs []llm.Tool) int {
	if t.specsEstimate == 0 {
		n := 0
		for _, s := range specs {
			n += catalog.Estimate(s.Name) + catalog.Estimate(s.Description) + catalog.Estimate(string(s.Parameters)) + 8
		}
		t.specsEstimate = n
	}
	return t.specsEstimate
}

// ledgerOptions bound the ledger by the model's window: a tenth of it, at
// most the default, so that on a small window the pinned part leaves room
// for the conversation.
func (t *turn) ledgerOptions(m catalog.Model) compact.LedgerOptions {
	o := compact.LedgerOptions{Root: t.ws.Root(), Files: t.knownFiles()}
	if m.ContextWindow > 0 {
		o.MaxTokens = min(compact.DefaultLedgerTokens, max(m.ContextWindow/10, 500))
	}
	return o
}

// knownFiles returns the file versions the session's guard knows, for the
// ledger.
func (t *turn) knownFiles() []protocol.FileVersion {
	files, err := t.core.opts.Store.Files(t.bg, t.sess.ID)
	if err != nil {
		return nil
	}
	return files
}

// compact summarises cut with the model and stores the compaction record.
func (t *turn) compact(cut compact.Cut, m catalog.Model, trigger, instructions string) error {
	t.runHooks(hooks.Event{Name: hooks.PreCompact, Trigger: trigger, CustomInstructions: instructions})
	req := compact.SummaryRequest(t.latest(), cut.Messages, instructions, m.ContextWindow-outputReserve(m), catalog.EstimateMessage)
	msgs := make([]llm.Message, len(req))
	for i := range req {
		msgs[i] = toLLM(&req[i])
		msgs[i].Images = nil // a summary is written from text
	}
	resp, err := t.model.Client.Stream(t.ctx, t.core.limitRequest(&llm.Request{Model: t.model.Name, Messages: msgs}), nil)
	if err != nil {
		return err
	}
	summary := strings.TrimSpace(resp.Text)
	if summary == "" {
		return errors.New("the model returned an empty summary")
	}
	if resp.HasUsage {
		t.usage.Add(protocol.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
			CachedTokens: resp.Usage.CachedTokens, ReasoningTokens: resp.Usage.ReasoningTokens})
	}
	rec := compact.Record{ID: newID(), UpToSeq: cut.UpToSeq, Summary: summary, Trigger: trigger,
		Instructions: instructions, CreatedAt: t.core.opts.Now().UTC(),
		Ledger: compact.Ledger(t.history[:cut.At], nil, t.ledgerOptions(m))}
	pc := &protocol.Compaction{ID: rec.ID, UpToSeq: rec.UpToSeq, Summary: rec.Summary, Ledger: rec.Ledger,
		Trigger: trigger, Instructions: instructions, CreatedAt: rec.CreatedAt}
	pct := t.viewPercent(m, append(t.records[:len(t.records):len(t.records)], rec))
	if err := t.recordCompaction(pc, protocol.Event{Type: protocol.EventCompaction, Compaction: pc, Step: t.step, ContextPercent: pct,
		Text: fmt.Sprintf("compacted %d messages (about %d tokens) into a summary", len(cut.Messages), cut.SummarisedTokens)}); err != nil {
		return err
	}
	t.records = append(t.records, rec)
	t.pinnedTokens()
	if err := t.retell(); err != nil {
		return err
	}
	return t.afterCompaction(trigger, summary)
}

// retell stores again, after a compaction, the environment note the
// summary took out of the model's view (a change of mode or model told at
// the start of this turn), so that the model does not work on from the
// system prompt's stale line until the next turn. The note goes at the end
// of the transcript, after the last tool results: the view's prefix up to
// it stays as the compaction made it.
func (t *turn) retell() error {
	note := t.environmentNote()
	if note == "" {
		return nil
	}
	msg := protocol.Message{Role: protocol.RoleSystem, Content: note}
	if err := t.record([]*protocol.Message{&msg}); err != nil {
		return fmt.Errorf("store environment note: %w", err)
	}
	return nil
}

// Compact summarises a session's older messages now (/compact), with
// optional instructions for the summary, and stores the compaction so
// every later request (in any process) sees the summary instead of them.
func (c *Core) Compact(ctx context.Context, sessionID, instructions string, sink Sink) error {
	return c.drive(ctx, turnSetup{sessionID: sessionID}, sink, func(t *turn) error {
		if !t.contextOn() {
			return errors.New("compaction needs the model catalog")
		}
		history, err := c.transcript(t.bg, t.sess.ID)
		if err != nil {
			return err
		}
		if err := t.loadContext(history); err != nil {
			return err
		}
		m := c.opts.Catalog(t.model.ID)
		cut, due := compact.PlanCounts(t.history, t.counts, compact.Options{Window: m.ContextWindow, Force: true,
			KeepRecentTokens: -1, Previous: t.latest(), PinnedTokens: t.pinned})
		if !due || len(cut.Messages) == 0 {
			return ErrNothingToCompact
		}
		t.statusEvent(protocol.StatusRunning, "")
		if err := t.emit(protocol.Event{Type: protocol.EventSessionUpdated, Status: protocol.StatusRunning}); err != nil {
			return err
		}
		return t.compact(cut, m, compact.TriggerManual, instructions)
	})
}

// startView builds the first view of a turn from its transcript: the
// repaired transcript, kept in step by construction from then on. With
// context management on, prepareView projects the view before every
// request instead, so nothing is built here.
func (t *turn) startView() {
	if !t.contextOn() {
		t.view = repairView(t.history)
	}
}
