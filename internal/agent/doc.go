// Package agent runs turns: it is the only owner of a session's progress.
//
// A Core is given a store, a way to reach models and a tool registry. Its
// Run method takes one user message through the loop of DESIGN §3 — store
// the message, ask the model, store its answer, run the tools it asked for,
// store each result, ask again — until the model answers without tool calls,
// the iteration budget is spent, the context is cancelled or something
// fails. Every step is reported as a protocol.Event; events that are not
// deltas are stored first, so any client can replay them by sequence.
//
// One writer per session: Core keeps an in-process set of sessions with a
// running turn, and a lease in the store, renewed by a heartbeat while the
// turn runs, keeps other processes out. Losing the lease aborts the turn.
//
// The transcript in the store is never rewritten. What the model sees is a
// view of it, repaired once when a turn starts (orphan and duplicate tool
// results dropped, missing ones filled in) and then kept consistent by
// construction: every tool call of a response gets exactly one result, in
// the order of the calls, before the next request.
//
// A new session's first message is its system prompt (prompt.go): the
// instructions and the environment the session starts in, frozen so that
// every request repeats it byte for byte. A later change of mode, model,
// sandbox or date is told by a note before the next user message
// (notes.go), never by rewriting the prompt.
//
// The prompt's memory and skill index (sessionctx.go) are frozen the same
// way, and what they were taken from is recorded with the session
// (context.frozen); the skill tool is offered only to sessions with
// skills. After a completed turn, post-turn observers (afterturn.go) keep
// the user's requests to remember as candidates and, in the background,
// ask the model for a skill learned from a turn of several successful tool
// calls; neither ever fails or delays the turn.
//
// Nothing a model or a command produces grows without bound (limits.go):
// answers and call arguments are capped as they stream, tool output
// streamed to the user is capped per call. A request the provider refuses
// as longer than the context window is compacted and sent once more
// (overflow.go). Sessions a dead process left running get a failed turn
// (recover.go).
//
// Only the application's wiring (cli, server, tests) imports agent; front
// ends see it through the events it emits.
package agent
