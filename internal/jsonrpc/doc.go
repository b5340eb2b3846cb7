// Package jsonrpc is the transport both of mx-claw's stdio front doors speak:
// JSON-RPC 2.0, one message per line, in both directions. The Agent Client
// Protocol (internal/acp) and the app server (internal/appserver) each map
// their own methods onto it; neither knows how lines are read or replies
// matched.
//
// A Conn reads requests and notifications from its peer and hands each
// request to the Handler on a goroutine of its own, so a long request (a
// prompt turn) never holds up a short one; notifications (a cancellation,
// a streamed update) are handled in the order they came. It also sends requests to
// the peer (Call) and matches the answers, and notifications (Notify).
// Writes are serialised: every message is one line, whole.
//
// It is written here rather than taken from a library because the two
// protocols need little of JSON-RPC (no batches, no HTTP) and both sides of
// the conversation send requests, which the common Go libraries model
// awkwardly; the package is small and has no dependencies.
//
// Who may import it: internal/acp and internal/appserver (and tests). It
// imports no other mx-claw package.
package jsonrpc
