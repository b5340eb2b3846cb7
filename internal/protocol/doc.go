// Package protocol holds mx-claw's wire types: the messages of a
// conversation, the events every front end renders, session records and the
// commands front ends send to the core.
//
// Everything that crosses a process boundary (the JSONL output of
// `mx-claw run --json`, the HTTP API and its SSE stream, JSON columns in the
// store) is one of these types. The package has no behaviour beyond small
// helpers on the types themselves and imports only the standard library, so
// any package may import it.
//
// The wire format is pinned: testdata/events.jsonl holds one event of every
// type, and event.schema.json is the JSON Schema of Event generated from
// the Go type (for clients in other languages). wire_test.go fails when the
// types no longer produce them — a renamed tag, a changed type, an event
// type without a sample — and `go test ./internal/protocol -update`
// rewrites both when the change is meant, so review sees it. Every
// enum-like string has a type and named constants (enums.go).
package protocol

// Version is the version of the wire format described by this package. It
// changes only when an existing shape changes incompatibly.
const Version = 1
