// Package sse reads and writes Server-Sent Events streams (the
// text/event-stream format of the WHATWG HTML standard, section 9.2).
//
// It is shared by the model provider clients (internal/llm/openai reads the
// chat-completions stream with it), by the local server (internal/server
// writes its session event streams with Writer) and by anything that
// consumes mx-claw's own event stream. It imports no other mx-claw package,
// so any package may import it.
//
// The reader follows the standard's parsing rules, with one deliberate
// leniency: an event that the stream ends without a blank line after it is
// still returned when the stream ends cleanly (io.EOF). Some gateways omit
// the final blank line, and dropping the last event of an otherwise good
// stream would lose its data. When the stream breaks with an error instead,
// the partial event is dropped, since its last line may have been cut.
//
// Reader.Next is the convenient API. Reader.NextRaw returns the same event
// as byte slices that stay valid only until the next call; a decoder that
// parses each event at once (as the provider client does) avoids copying
// every payload that way. After warm-up a Reader allocates nothing per
// event on the NextRaw path.
package sse
