package agent

import "github.com/mx-claw/mx-claw/internal/protocol"

// Sink receives a session's events as the Core makes them: every method
// that runs or changes a session (Run, Resolve, Answer, Compact,
// CreateSession, Enqueue, EndSession) takes one, and SubmitTurn is Run
// with a Sink that feeds an iterator. A nil Sink drops the events; the
// store has them anyway.
//
// The contract, which the server's broker and every front end rely on:
//
//   - One call at a time, in order. The Core calls a Sink from the
//     goroutine running the turn or from one of its tool goroutines (a
//     parallel batch streams several commands' output), but never from
//     two at once: calls are serialised under the turn's lock, so a Sink
//     needs no locking of its own for a single turn, and events arrive in
//     the order of their Sequence.
//   - Stored first. An event of a stored type (EventType.Stored) reaches
//     the Sink only after it is in the store, with its Sequence set; a
//     delta (message.delta, reasoning.delta, tool.output) has Sequence 0
//     and is never stored. A client that missed events can replay them
//     from the store by Sequence.
//   - Never after the method returns. When Run (or the others) returns,
//     no call is running or will come.
//   - A slow Sink slows the turn. The call is synchronous and holds the
//     turn's lock: while it runs, the model's stream is not read further
//     and no other event is recorded. A Sink that serves many or remote
//     consumers (SSE clients) must hand events to per-consumer buffers
//     and never block on a consumer; one that cannot keep up should be
//     dropped and catch up from the store, not make the turn wait.
//   - It cannot start another turn of the same session: the turn that
//     calls it is still running, so Run fails with ErrTurnActive.
type Sink func(protocol.Event)
