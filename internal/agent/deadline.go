package agent

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// A turn's time budget is a deadline on its context, not only a check
// between steps: a model request or a command in flight when the time is
// up is cancelled then, and the turn ends with the *BudgetError (exit 3),
// not as a cancellation.

// withTimeBudget returns ctx with the time budget d as its deadline (none
// if d <= 0); the deadline's cause is the *BudgetError the turn ends with.
func withTimeBudget(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, &BudgetError{What: "time", Used: d.String(), Limit: d.String()})
}

// overBudget returns the *BudgetError that ended ctx in place of runErr,
// when the turn stopped because its time was up; else runErr.
func overBudget(ctx context.Context, runErr error) error {
	var be *BudgetError
	if runErr == nil || errors.As(runErr, &be) {
		return runErr
	}
	if errors.As(context.Cause(ctx), &be) {
		return be
	}
	return runErr
}

// failureCode is the code of turn.failed for err.
func failureCode(err error) protocol.ErrorCode {
	var se *llm.StallError
	if errors.As(err, &se) {
		return protocol.CodeStall
	}
	return errorCode(err)
}

// maxPartial caps the partial answer a turn.cancelled event keeps:
// enough to show what was said.
const maxPartial = 32 << 10

// keepPartial adds a piece of the answer streaming in to what the turn's
// end event keeps, up to maxPartial bytes.
func (t *turn) keepPartial(text string) {
	room := maxPartial - t.partial.Len()
	if room <= 0 {
		return
	}
	if len(text) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	t.partial.WriteString(text)
}
