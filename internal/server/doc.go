// Package server is `mx-claw serve`: the local HTTP API of DESIGN §11 ("The
// local server — contract"), its SSE event streams and the web panel's
// files, on net/http pattern routes.
//
// # Security
//
// The server binds to loopback unless told otherwise, and assumes that any
// web page the user visits may send it requests. So, before any route:
//
//   - a Host header other than localhost, 127.0.0.1 or [::1] with the
//     server's port is refused (403: DNS rebinding);
//   - so is an Origin other than the server's own, and an API request a
//     browser marks as coming from another page (Sec-Fetch-Site other than
//     same-origin or none);
//   - every /api/ route except GET /api/health needs the token, as
//     Authorization: Bearer TOKEN (compared in constant time) or as the
//     panel's cookie, which GET /login?token=TOKEN trades for it (HttpOnly,
//     SameSite=Strict, named after the port because browsers share cookies
//     between the ports of a host) (401);
//   - every /api/ request that is not a GET or HEAD must say Content-Type:
//     application/json (415), which no HTML form can send without a CORS
//     preflight, and there is no CORS at all.
//
// Errors are JSON, {"error": {"code", "message"}}.
//
// # Turns
//
// A message posted to an idle session starts a turn through the same
// agent.Core.Run the terminal uses (budgets, hooks, permissions and
// compaction included), with approvals that wait for an answer from any
// client (agent.AskWait). A message posted while the session is busy is
// queued in the store: behind a turn of this server it runs when that turn
// ends; behind a turn of another process (`mx-claw run`, the REPL), that
// process's turn sends it when it ends well, or, if that process died
// first, this server does once its lease is gone. A turn that is
// cancelled or fails gives its queued messages back (input.returned) for
// the client to put in its input box; they are never sent after a later
// message. An approval paused by another
// process (`run --on-ask pause`) is answered here and its turn continues
// here; one a turn of another process waits for (the REPL) is answered
// by storing the answer, and that turn goes on there. The lease keeps one
// writer per session throughout.
//
// A posted message is stored at most once. 202 means it was accepted:
// sent (stored as a user message, alone or joined with the messages
// queued before it, blank lines apart) or queued. Any other answer (a 409
// included) means it was neither stored nor queued, and may be posted
// again. A client that got no answer at all (the worker died, the
// connection broke) cannot tell from the transcript alone, because an
// accepted message may wait in the queue: GET /api/sessions/{id} lists
// the queue ("queued") read before the transcript ("messages"), and a
// message leaves the queue only in the transaction that stores it, so an
// accepted message is in one of the two — or was given back
// (input.returned) when the turn it waited for failed. Post it again only
// if it is in neither, once the worker that got it answered or is gone.
//
// # Event streams
//
// GET /api/sessions/{id}/events replays the session's stored events after
// Last-Event-ID (or ?after=N) as `id: SEQUENCE`, `event: TYPE`,
// `data: EVENT-JSON`, then follows the session live: stored events with
// their id, deltas without. Each session that has a stream open has one
// feed: a bus.Broker fed by this process's turns as they run and by a
// poller that reads the store's events after the last sequence published
// (every PollInterval), so the stored events of a turn another process runs
// reach the stream too; their deltas, which only that process sees, do
// not. The feed publishes stored events strictly in sequence order, filling
// any gap from the store, and each stream skips what it already sent, so a
// client sees every stored event exactly once across reconnects. A stream
// whose subscriber buffer overflows (a slow client) is dropped by the
// broker, never slowing a turn, and catches up from the store by itself.
// When the store tells of stored events (store.EventNotifier: LISTEN/NOTIFY
// on PostgreSQL), the feed reads them at once instead of at the next poll.
// Several servers on one PostgreSQL store are workers of one service: each
// takes over the sessions a dead or frozen worker left running
// (workers.go).
// A stream.heartbeat event (not a comment, so a page can see it) goes out
// when nothing else did for HeartbeatInterval; stream.ready follows the
// replay with the session as it is now; stream.closing ends every stream
// when the server shuts down, after the cancelled turns' events. A
// subagent's events reach its parent's stream as well, without an id
// (nested.go), and so do its approvals, which the parent's detail lists
// and the approvals route answers under either session's id.
//
// Only cli imports server (and tests). It works on app's App — the core,
// the store, the config and the secret chain — and uses the types of the
// packages behind it (agent's requests and errors, store's errors,
// permission's modes and rules); layering_test.go lists what it may
// import.
package server
