// Package llmtest is a scripted fake of an OpenAI-compatible model server.
// Tests use it to drive the model client and the agent loop without a
// network or an API key, and end-to-end tests point the real mx-claw binary
// at it over loopback (see cmd/fakellm, which serves a JSON script).
//
// A Server answers each POST /v1/chat/completions with the next queued
// Reply, or, when the queue is empty, with what its Responder decides
// (by default the text "ok"). It streams the way the providers we recorded
// do (shared/testdata/provider-streams): a role chunk first, text and
// reasoning split over several deltas, each tool call announced with its id
// and name and its arguments split over several more, a finish_reason chunk,
// a separate usage chunk with "choices":[] when the request asked for
// stream_options.include_usage, and data: [DONE]. It also serves
// GET /v1/models, and it records every request it sees.
//
// Every chat request is checked for the pairing real providers enforce
// (CheckChat: each tool message follows its assistant call, every call has
// exactly one result, in call order). A request that breaks it is answered
// 400, as a provider would, and kept in Violations; NewTestServer fails
// the test at its end if there was one, so every agent and end-to-end test
// guards DESIGN §2's second invariant without asking.
//
// Failures come on cue, as fields of a Reply: an HTTP error status with
// Retry-After, a connection cut in the middle of a tool call's arguments, a
// stream that hangs until the client or the server gives up, an
// `event: error` after 200 OK, and malformed arguments (a ToolCall whose
// Arguments is not JSON is streamed as it is). Reply.SSE replays a recorded
// stream byte for byte.
//
// The server is built for speed, because a benchmark measures the agent's
// own per-step cost against it: request bodies are read by a small
// hand-written JSON reader (parse.go says why), chunks are encoded by hand
// into one reused buffer, nothing sleeps unless a Reply asks for
// ChunkDelay, and Server.RecordBodies(false) keeps long runs from holding
// every request body.
//
// Only tests and cmd/fakellm may import this package; production code must
// not. It imports only the standard library, not even package llm, so that
// the wire format it speaks is written down independently of the client
// that reads it.
package llmtest
