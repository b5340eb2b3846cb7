package llm

import (
	"fmt"
	"time"
)

// DefaultIdleTimeout is how long a client waits for the next byte of a
// response (its headers, or the next piece of its stream) before it calls
// the request stalled, when its config does not say.
const DefaultIdleTimeout = 2 * time.Minute

// StallError is a request the provider stopped answering: nothing came
// for After, before the headers or in the middle of the stream. Clients
// retry it as a transient failure; the partial answer is discarded.
type StallError struct {
	After time.Duration
	// Started says part of the answer had arrived.
	Started bool
}

func (e *StallError) Error() string {
	where := "before answering"
	if e.Started {
		where = "in the middle of its answer"
	}
	return fmt.Sprintf("the provider sent nothing for %s %s (streamIdleTimeout in config.json sets how long to wait)", e.After, where)
}
