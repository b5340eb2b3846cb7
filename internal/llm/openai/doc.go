// Package openai is the llm.Client for OpenAI-compatible chat-completions
// servers: OpenAI itself, DeepSeek, Groq, OpenRouter, vLLM, Ollama, LM
// Studio, llama.cpp and the like. It speaks only the streaming form of
// POST {BaseURL}/chat/completions.
//
// Only the agent wiring (internal/app, internal/agent) and tests should
// import it; everything else talks to the llm.Client interface. It imports
// llm and sse, nothing else of mx-claw.
//
// # Stream decoding
//
// Each SSE event is decoded at once into a small struct that names only
// the fields the client uses; nothing of the raw stream is kept. The
// quirks it absorbs, each seen in a recorded stream:
//
//   - Reasoning text arrives as delta.reasoning_content (DeepSeek, Qwen)
//     or delta.reasoning (Groq, OpenRouter, vLLM, Ollama). If a chunk has
//     both, reasoning_content wins, as some servers send the same text
//     twice.
//   - Usage arrives in a final chunk with "choices":[] (OpenAI, asked for
//     with stream_options.include_usage), or in the same chunk as the
//     finish_reason (DeepSeek). The last usage seen wins. Cached tokens are
//     prompt_tokens_details.cached_tokens, or DeepSeek's
//     prompt_cache_hit_tokens.
//   - Only choice index 0 is used. The client never asks for n > 1, and a
//     server that streams several choices anyway (see the
//     openai-chat-multiple-choices recording) has its other choices
//     ignored on purpose rather than mixed into the answer.
//   - "data: [DONE]" ends the stream. A stream that ends without [DONE]
//     is accepted only if choice 0 already had its finish_reason (some
//     gateways omit [DONE]); otherwise it is an llm.StreamError wrapping
//     llm.ErrIncompleteStream and the partial response is dropped.
//   - An "event: error" event, or a chunk with an "error" object, is an
//     llm.StreamError carrying the provider's message and code.
//   - SSE comments (keep-alives) and named events other than "message" and
//     "error" are skipped.
//
// # Retries
//
// Only failures before any response body byte is read are retried: the
// retryable statuses of llm.RetryableStatus, and connection errors (refused,
// reset, EOF before the status line, timeouts, temporary DNS failures).
// Retry-After and OpenAI's retry-after-ms are honoured up to the policy's
// MaxRetryAfter, and an x-should-retry header overrides the status. A
// stream that fails after it started is never sent again, since the user
// has already seen part of it — with one exception: a provider that goes
// silent (no headers, or no next piece of the stream, for
// Config.IdleTimeout, two minutes by default) has its attempt cancelled
// and sent again like a connection failure, announced by a retry delta so
// that front ends drop the partial answer. Without that, a server that
// stops mid-answer would hang the turn forever; when retries run out the
// error is an *llm.StallError.
//
// # Cost per step
//
// The request is built on every agent step and grows with the transcript,
// so its body is written by hand into one buffer sized in advance (no
// reflection, no intermediate structs). Chunks are decoded by one
// json.Decoder per stream that keeps its state between chunks, into a
// reused struct; decoders and their SSE buffers are pooled in the Client.
// What remains per chunk is mostly the strings of the deltas themselves.
// BenchmarkStream measures a step: a request a few steps into a turn and
// a 20-chunk response with a tool call.
//
// # Connections
//
// After [DONE] the client returns the response at once and reads what
// remains of the body in the background, for at most 64 KiB and 100ms, so
// that the connection goes back to the pool instead of being closed;
// against a remote provider this saves a TLS handshake on every agent step,
// and a server that is slow to end the body does not delay the next step.
//
// A server that ends every response with "Connection: close" (simple local
// servers and some gateways do) would make every step wait for a new TCP
// connection. When a response says so, the client dials the next
// connection at once, in the background, while the agent stores the
// answer and runs the tools; the next request takes it if it is still
// open (a non-blocking peek tells) and younger than 20 s, and dials
// afresh otherwise. Proxies are respected: the spare goes to the proxy.
// This applies only to the Client's own HTTP client (Config.HTTPClient
// nil).
package openai
