package agent

import (
	"fmt"

	"github.com/mx-claw/mx-claw/internal/catalog"
	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// A provider refuses a request longer than the model's context window
// (llm.IsContextOverflow): the catalog's window was wrong for this
// provider (a local server started with a small context), or the token
// estimate fell short. The turn then shrinks the view to the window the
// provider named (or to three quarters of what was sent), compacting and
// dropping old turns as the view needs, and asks once more; a second
// refusal ends the turn with a ContextOverflowError.

// ContextOverflowError ends a turn whose request did not fit the model's
// context window even after the view was compacted.
type ContextOverflowError struct {
	// Err is the provider's refusal.
	Err error
}

func (e *ContextOverflowError) Error() string {
	return "The conversation does not fit the model's context window, even after compacting it (" + e.Err.Error() +
		"). Start a new session, or use a model with a larger window (--model); if the window is known, " +
		"set it in config.json's modelSettings contextWindow."
}

func (e *ContextOverflowError) Unwrap() error { return e.Err }

// completeFitting asks the model (complete); when the provider says the
// request is over the context window, it shrinks the view and asks once
// more.
func (t *turn) completeFitting(specs []llm.Tool) (*llm.Response, error) {
	resp, err := t.core.complete(t, specs)
	if err == nil || !llm.IsContextOverflow(err) || t.ctx.Err() != nil {
		return resp, err
	}
	if !t.contextOn() {
		return nil, &ContextOverflowError{Err: err}
	}
	m := t.capWindow(t.core.opts.Catalog(t.model.ID))
	limit := llm.ContextLimit(err)
	if limit <= 0 || limit >= m.ContextWindow {
		// No window named, or not a smaller one: aim under what was sent.
		limit = min(m.ContextWindow, t.viewEstimate+outputReserve(m)) * 3 / 4
	}
	t.windowCap = limit
	t.tell(protocol.Event{Type: protocol.EventWarning, Step: t.step, Text: fmt.Sprintf(
		"the request was over the model's context window (%v); compacting the conversation to %d tokens and trying once more", err, limit)})
	if err := t.prepareView(specs); err != nil {
		return nil, err
	}
	resp, err = t.core.complete(t, specs)
	if err != nil && llm.IsContextOverflow(err) {
		return nil, &ContextOverflowError{Err: err}
	}
	return resp, err
}

// capWindow lowers a model's context window to what the provider said it
// is (windowCap), for the rest of the turn.
func (t *turn) capWindow(m catalog.Model) catalog.Model {
	if t.windowCap > 0 && t.windowCap < m.ContextWindow {
		m.ContextWindow = t.windowCap
	}
	return m
}
