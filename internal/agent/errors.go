package agent

import (
	"errors"
	"fmt"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// ErrTurnActive is returned when this process already runs a turn on the
// session.
var ErrTurnActive = errors.New("a turn is already running on this session in this process")

// ErrLeaseLost is the cause of a turn aborted because another process took
// over the session's lease.
var ErrLeaseLost = errors.New("lost the session lease to another process")

// InterruptedTurnError is returned, with TurnRequest.StopIfInterrupted,
// by a turn that found the session's last turn interrupted: a process
// died while running it (its lease expired or its process is gone). The
// interrupted turn is recorded as failed by then, and nothing of the new
// turn is stored; the caller may resume the interrupted one first
// (Continue) and queue the new message behind it.
type InterruptedTurnError struct {
	SessionID string
	// Owner is the lease owner of the process that ran it, if known.
	Owner string
}

func (e *InterruptedTurnError) Error() string {
	return fmt.Sprintf("session %s: its last turn was interrupted (the process running it stopped)", e.SessionID)
}

// ErrSessionNotFound is returned for a session that does not exist.
var ErrSessionNotFound = errors.New("session not found")

// MaxIterationsError is returned when a turn used up its iteration budget
// while the model still asked for tools.
type MaxIterationsError struct {
	N int
}

func (e *MaxIterationsError) Error() string {
	return fmt.Sprintf("Maximum agent iterations reached (%d)", e.N)
}

// ConfigError marks an error in the user's configuration or choice of model
// that no retry will cure: an unknown model, a provider that is not ready.
type ConfigError struct {
	Err error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// BudgetError is returned when a turn stops because a budget (tokens, cost
// or time) was spent; the session stays usable.
type BudgetError struct {
	// What is "tokens", "cost" or "time".
	What  string
	Used  string
	Limit string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("Budget spent: %s %s of %s; the session is kept, continue it with a new message", e.What, e.Used, e.Limit)
}

// LoopError is returned when the model keeps making the same tool call.
type LoopError struct {
	Tool  string
	Times int
	Steps int
}

func (e *LoopError) Error() string {
	return fmt.Sprintf("Loop detected: the model called %s with the same arguments %d times within %d steps; stopping the turn", e.Tool, e.Times, e.Steps)
}

// The errors above carry a protocol.ErrorCode, so front ends can act on
// them (offer to continue, point at the file) without knowing this
// package: errors.As with an interface{ ErrorCode() protocol.ErrorCode }.

// ErrorCode returns protocol.CodeMaxIterations.
func (e *MaxIterationsError) ErrorCode() protocol.ErrorCode { return protocol.CodeMaxIterations }

// ErrorCode returns protocol.CodeConfig.
func (e *ConfigError) ErrorCode() protocol.ErrorCode { return protocol.CodeConfig }

// ErrorCode returns protocol.CodeBudget.
func (e *BudgetError) ErrorCode() protocol.ErrorCode { return protocol.CodeBudget }

// ErrorCode returns protocol.CodeLoop.
func (e *LoopError) ErrorCode() protocol.ErrorCode { return protocol.CodeLoop }

// errorCode returns the code of err, or "" if it has none.
func errorCode(err error) protocol.ErrorCode {
	var c interface{ ErrorCode() protocol.ErrorCode }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}
