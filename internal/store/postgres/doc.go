// Package postgres is the PostgreSQL implementation of store.Store, for
// teams that run several mx-claw workers (`mx-claw serve` processes, on one
// machine or many) on one shared session store. It is selected by a
// postgres:// URL in MX_CLAW_STORE or the config's "store" key, passes the
// same conformance suite as the SQLite store (internal/store/storetest),
// and keeps the same guarantees across processes and hosts:
//
//   - Sequences: a session's message Seq and event Sequence come from
//     counters in its row; the UPDATE that advances them locks the row, so
//     the appends of one session are serialised across every worker and a
//     number is given once, in commit order.
//   - One transaction per step: AppendBatch writes a step's records in one
//     transaction, sent in two round trips (pipelined: begin, fence,
//     counters; then the rows, the notice and commit).
//   - Leases: a row per session with its owner (host, pid and the host's
//     boot id), taken in one INSERT … ON CONFLICT DO UPDATE … WHERE
//     statement that locks the row, renewed by the turn's heartbeat.
//     Expiry is judged by the database's clock, so hosts' clocks need not
//     agree. A holder is judged gone before its lease expires only on its
//     own host and boot, when its process no longer runs.
//   - Fencing: a write made under a lease (store.WithLease) calls
//     mx_claw_check_lease first in its transaction, which locks the lease
//     row and aborts the transaction unless the owner still holds it
//     unexpired; a process paused past its lease's expiry (SIGSTOP, a
//     frozen VM) cannot write when it wakes.
//   - Event notices: every transaction that stores events sends a NOTIFY
//     with the session and its last sequence on commit; SubscribeEvents
//     LISTENs on one connection and fans the notices out, so each worker's
//     event streams wake when any worker stores an event.
//   - History (time travel and the session library): file changes,
//     reverts, rewinds and imported sessions' sources are written in the
//     transaction of the batch they come with; DeleteSession locks the
//     session's row and lease, and refuses a session a live owner holds.
//   - Session search is PostgreSQL's text search (search.go): a stored
//     generated tsvector column of messages with a GIN index, English
//     stems without stop words, ts_rank, ts_headline snippets, under the
//     SQLite store's rules (store.SearchTerms, store.SearchCandidates)
//     and words: each CJK character is a word of its own (migration 0006,
//     as the SQLite store's cjk.go), and so is each pair of neighbouring
//     CJK characters, by which a word of two or more is looked up (0007).
//
// The schema is versioned by the migrations in migrations/, applied under
// an advisory lock, so workers starting together migrate once. The search
// path of the URL (search_path=…) chooses the schema; one database may hold
// several stores in several schemas.
//
// Who may import it: app (to open the store a URL names) and tests.
package postgres
