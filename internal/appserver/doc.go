// Package appserver is `mx-claw app-server`: JSON-RPC 2.0 over stdin and
// stdout (one message per line) for programs that embed mx-claw, shaped
// after codex's app-server. A client initializes, starts or resumes a
// thread (an mx-claw session), starts turns on it and interrupts them,
// lists and reads threads; every event of the core — stored or live — comes
// as a notification whose params are the protocol.Event itself, and a call
// that needs approval comes as a request from the server that the client
// answers.
//
// The messages are Go types (types.go); schema.go generates their JSON
// Schema, checked in as schema.json and guarded by a golden test, so the
// documented shape cannot drift from the code. events.go is the one
// mapping from event types to notification methods.
//
// What is not here: any agent logic. Turns, permissions, approvals and
// storage are the core's, reached through app.Driver.
//
// Who may import it: internal/cli. It imports internal/app,
// internal/protocol and internal/jsonrpc.
package appserver
