package llmtest

import (
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// A stream is written chunk by chunk into one pooled buffer, by hand rather
// than with encoding/json: the chunks have a fixed shape, and the
// benchmark that drives the agent against this server should measure the
// agent, not the fake.
//
// Any interruption (the client goes away, the server closes, a write
// fails) ends the handler with panic(http.ErrAbortHandler), which net/http
// recovers quietly and answers by breaking the connection.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// streamer writes the chunks of one streamed answer.
type streamer struct {
	s     *Server
	r     *http.Request
	w     http.ResponseWriter
	rc    *http.ResponseController
	a     *answerInfo
	head  []byte // `data: {"id":...,"model":...,` shared by every chunk
	buf   []byte
	pbuf  *[]byte
	timer *time.Timer
	sent  int
}

// stream sends a as a chat.completion.chunk event stream.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, a *answerInfo) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	st := &streamer{s: s, r: r, w: w, rc: http.NewResponseController(w), a: a}
	st.pbuf = bufPool.Get().(*[]byte)
	st.buf = (*st.pbuf)[:0]
	defer st.release()
	st.head = st.appendHead(make([]byte, 0, 160))

	rep := a.rep
	n := rep.pieces()
	st.begin()
	st.buf = append(st.buf, `{"role":"assistant","content":""}`...)
	st.end("")
	if rep.Gate != nil {
		s.await(r, rep.Gate)
	}
	if rep.Hang {
		switch {
		case rep.Reasoning != "":
			st.delta("reasoning_content", firstPiece(rep.Reasoning, n))
		case rep.Text != "":
			st.delta("content", firstPiece(rep.Text, n))
		}
		s.hang(r)
	}
	st.raw(": keep-alive\n\n")

	split(rep.Reasoning, n, false, func(p string) { st.delta("reasoning_content", p) })
	cutText := rep.CutMidArguments && len(rep.ToolCalls) == 0
	split(rep.Text, n, cutText, func(p string) { st.delta("content", p) })
	if cutText {
		panic(http.ErrAbortHandler)
	}
	if rep.ErrorEvent != "" {
		st.buf = append(st.buf[:0], "event: error\ndata: {\"error\":{\"message\":"...)
		st.buf = appendString(st.buf, rep.ErrorEvent)
		st.buf = append(st.buf, "}}\n\n"...)
		st.write()
		return
	}
	for i, c := range rep.ToolCalls {
		st.begin()
		st.buf = append(st.buf, `{"tool_calls":[{"index":`...)
		st.buf = strconv.AppendInt(st.buf, int64(i), 10)
		st.buf = append(st.buf, `,"id":`...)
		st.buf = appendString(st.buf, c.ID)
		st.buf = append(st.buf, `,"type":"function","function":{"name":`...)
		st.buf = appendString(st.buf, c.Name)
		st.buf = append(st.buf, `,"arguments":""}}]}`...)
		st.end("")
		cut := rep.CutMidArguments && i == 0
		split(c.Arguments, n, cut, func(p string) {
			st.begin()
			st.buf = append(st.buf, `{"tool_calls":[{"index":`...)
			st.buf = strconv.AppendInt(st.buf, int64(i), 10)
			st.buf = append(st.buf, `,"function":{"arguments":`...)
			st.buf = appendString(st.buf, p)
			st.buf = append(st.buf, `}}]}`...)
			st.end("")
		})
		if cut {
			panic(http.ErrAbortHandler)
		}
	}
	st.begin()
	st.buf = append(st.buf, `{}`...)
	st.end(rep.finishReason())
	if a.includeUsage {
		st.usage()
	}
	st.raw("data: [DONE]\n\n")
}

// appendHead appends the start shared by every chunk of the answer.
func (st *streamer) appendHead(b []byte) []byte {
	b = append(b, `data: {"id":`...)
	b = appendString(b, st.a.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, st.a.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, st.a.model)
	return append(b, `,"system_fingerprint":"fp_fakellm",`...)
}

// begin starts a chunk with one choice; the caller appends its delta.
func (st *streamer) begin() {
	st.buf = append(st.buf[:0], st.head...)
	st.buf = append(st.buf, `"choices":[{"index":0,"delta":`...)
}

// end finishes a chunk begun with begin and sends it.
func (st *streamer) end(finish string) {
	st.buf = append(st.buf, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		st.buf = append(st.buf, "null"...)
	} else {
		st.buf = appendString(st.buf, finish)
	}
	st.buf = append(st.buf, "}]}\n\n"...)
	st.write()
}

// delta sends a chunk whose delta has one string field.
func (st *streamer) delta(field, s string) {
	st.begin()
	st.buf = append(st.buf, `{"`...)
	st.buf = append(st.buf, field...)
	st.buf = append(st.buf, `":`...)
	st.buf = appendString(st.buf, s)
	st.buf = append(st.buf, '}')
	st.end("")
}

// usage sends the usage chunk, which has no choices.
func (st *streamer) usage() {
	u := st.a.usage
	b := append(st.buf[:0], st.head...)
	b = append(b, `"choices":[],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens+u.CompletionTokens), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CachedTokens), 10)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.ReasoningTokens), 10)
	st.buf = append(b, "}}}\n\n"...)
	st.write()
}

// raw sends text as it is.
func (st *streamer) raw(text string) {
	st.buf = append(st.buf[:0], text...)
	st.write()
}

// write sends the buffer and flushes it, after the reply's ChunkDelay
// unless it is the first write.
func (st *streamer) write() {
	if d := st.a.rep.ChunkDelay; d > 0 && st.sent > 0 {
		if st.timer == nil {
			st.timer = time.NewTimer(d)
		}
		st.s.pause(st.r, d, st.timer)
	}
	st.sent++
	if _, err := st.w.Write(st.buf); err != nil {
		panic(http.ErrAbortHandler)
	}
	if err := st.rc.Flush(); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// release returns the buffer to the pool and stops the timer.
func (st *streamer) release() {
	if st.timer != nil {
		st.timer.Stop()
	}
	if cap(st.buf) <= 64<<10 {
		*st.pbuf = st.buf[:0]
		bufPool.Put(st.pbuf)
	}
}

// hang blocks until the client goes away or the server closes, then
// breaks off the answer.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
	panic(http.ErrAbortHandler)
}

// await waits until gate is closed. If the client goes away or the
// server closes first, it breaks off the answer.
func (s *Server) await(r *http.Request, gate <-chan struct{}) {
	select {
	case <-gate:
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	case <-s.done:
		panic(http.ErrAbortHandler)
	}
}

// pause waits for d, on t if it is not nil. If the client goes away or
// the server closes first, it breaks off the answer.
func (s *Server) pause(r *http.Request, d time.Duration, t *time.Timer) {
	if t == nil {
		t = time.NewTimer(d)
		defer t.Stop()
	} else {
		t.Reset(d)
	}
	select {
	case <-t.C:
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	case <-s.done:
		panic(http.ErrAbortHandler)
	}
}

// split calls emit with up to n consecutive pieces of s of about equal
// size, never splitting a UTF-8 sequence. If cut is set, it stops after
// about half of s.
func split(s string, n int, cut bool, emit func(piece string)) {
	limit := len(s)
	if cut {
		limit = runeStart(s, len(s)/2)
	}
	for k, start := 1, 0; k <= n && start < limit; k++ {
		end := min(runeStart(s, k*len(s)/n), limit)
		if end > start {
			emit(s[start:end])
			start = end
		}
	}
}

// firstPiece is the first piece split would emit.
func firstPiece(s string, n int) string {
	return s[:runeStart(s, max(1, len(s)/n))]
}

// runeStart is the first index >= i that starts a UTF-8 sequence, or
// len(s).
func runeStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// except that <, > and & are left alone. Invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
