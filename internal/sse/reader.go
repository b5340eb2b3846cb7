package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxLineSize is the longest line, in bytes and without its line ending, a
// Reader accepts. Providers put a whole JSON chunk on one data line, and
// some (whole tool calls, long reasoning) are large.
const MaxLineSize = 16 << 20

// ErrLineTooLong is returned by a Reader that met a line longer than
// MaxLineSize, or an event whose data lines add up to more than that. The
// stream cannot be read further.
var ErrLineTooLong = errors.New("sse: line too long")

// Event is one dispatched event.
type Event struct {
	// Event is the value of the event's "event:" field, or "" if it had
	// none (the standard calls such an event "message").
	Event string
	// Data is the event's "data:" lines joined with "\n".
	Data string
	// ID is the last event ID: the value of the most recent "id:" field in
	// this event or an earlier one, as the standard defines it. Clients
	// send it back as Last-Event-ID when they reconnect.
	ID string
}

// RawEvent is an event whose Event and Data point into the Reader's
// buffers. They are valid only until the next call to NextRaw or Next.
type RawEvent struct {
	Event []byte
	Data  []byte
	ID    string
}

// Reader reads events from a stream. It buffers its input, so the stream
// should not be read by anyone else once the Reader has started. A Reader
// is not safe for concurrent use.
type Reader struct {
	sc      *bufio.Scanner
	buf     []byte // the scanner's first buffer, kept for Reset
	name    []byte
	data    []byte
	hasData bool
	lastID  string
	started bool
	err     error
}

// initialBuffer is the Reader's first buffer size; the buffer grows up to
// MaxLineSize as lines need it.
const initialBuffer = 8 << 10

// NewReader returns a Reader that reads events from r.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{buf: make([]byte, initialBuffer)}
	rd.Reset(r)
	return rd
}

// Reset makes the Reader read a new stream from src, as if it were new,
// while keeping its buffers. Reset(nil) only drops the reference to the
// old stream (for a Reader kept in a pool); Next then returns io.EOF.
func (r *Reader) Reset(src io.Reader) {
	if src == nil {
		*r = Reader{buf: r.buf, name: r.name[:0], data: r.data[:0], err: io.EOF}
		return
	}
	sc := bufio.NewScanner(src)
	// The buffer must hold a whole line plus its CRLF.
	sc.Buffer(r.buf, MaxLineSize+2)
	sc.Split(scanLines)
	*r = Reader{sc: sc, buf: r.buf, name: r.name[:0], data: r.data[:0]}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// if reading failed it returns that error (or ErrLineTooLong). Once it has
// returned an error it returns the same error on every later call.
func (r *Reader) Next() (Event, error) {
	raw, err := r.NextRaw()
	if err != nil {
		return Event{}, err
	}
	return Event{Event: eventName(raw.Event), Data: string(raw.Data), ID: raw.ID}, nil
}

// NextRaw is like Next, but the returned event's Event and Data point into
// the Reader's buffers and are valid only until the next call.
func (r *Reader) NextRaw() (RawEvent, error) {
	if r.err != nil {
		return RawEvent{}, r.err
	}
	r.name = r.name[:0]
	r.data = r.data[:0]
	r.hasData = false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(line) == 0 {
			if r.hasData {
				return r.event(), nil
			}
			// An event without data is not dispatched, and its name
			// does not carry over to the next one.
			r.name = r.name[:0]
			continue
		}
		r.field(line)
		if len(r.data) > MaxLineSize {
			// Many data lines make one event: cap it like one line.
			r.err = ErrLineTooLong
			return RawEvent{}, r.err
		}
	}
	err := r.sc.Err()
	switch {
	case err == nil:
		err = io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		err = ErrLineTooLong
	}
	r.err = err
	// A final event without its blank line counts only at a clean end;
	// after a read error its last line may be cut short.
	if err == io.EOF && r.hasData {
		return r.event(), nil
	}
	return RawEvent{}, err
}

var utf8BOM = []byte("\xEF\xBB\xBF")

func (r *Reader) event() RawEvent {
	return RawEvent{Event: r.name, Data: r.data, ID: r.lastID}
}

// field handles one non-empty line.
func (r *Reader) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i == 0 {
		return // a comment, such as a keep-alive
	} else if i > 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.name = append(r.name[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.lastID {
			r.lastID = string(value)
		}
	}
	// "retry" and unknown fields are ignored.
}

// eventName converts an event name, without allocating for common ones.
func eventName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "message":
		return "message"
	case "error":
		return "error"
	}
	return string(b)
}

// scanLines is a bufio.SplitFunc for SSE lines, which end with CRLF, LF or
// a lone CR. The last line of the stream may have no ending.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		if j := bytes.IndexByte(data[:i], '\r'); j >= 0 {
			if j == i-1 {
				return i + 1, data[:j], nil // CRLF
			}
			return j + 1, data[:j], nil // a lone CR before the LF
		}
		return i + 1, data[:i], nil
	}
	if j := bytes.IndexByte(data, '\r'); j >= 0 {
		if j == len(data)-1 && !atEOF {
			return 0, nil, nil // an LF may follow
		}
		return j + 1, data[:j], nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
