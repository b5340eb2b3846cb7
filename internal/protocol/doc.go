// Package protocol holds mx-claw's wire types: the messages of a
// conversation, the events every front end renders, session records and the
// commands front ends send to the core.
//
// Everything that crosses a process boundary (the JSONL output of
// `mx-claw run --json`, the HTTP API and its SSE stream, JSON columns in the
// store) is one of these types. The package has no behaviour beyond small
// helpers on the types themselves and imports only the standard library, so
// any package may import it.
package protocol

// Version is the version of the wire format described by this package. It
// changes only when an existing shape changes incompatibly.
const Version = 1
