package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// ErrBadField is returned by Writer.Event for an id or event name holding a
// line break (or, for an id, a NUL), which would break the stream's framing.
var ErrBadField = errors.New("sse: id or event name holds a line break")

// Writer writes a text/event-stream. Each method writes one complete
// frame with a single Write call, so frames never interleave when the
// underlying writer is shared under a lock. Flushing is the caller's: an
// HTTP handler flushes after each frame it wants delivered now.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Event writes one event: an "id:" line unless id is empty, an "event:"
// line unless event is empty, and data as one "data:" line per line of it
// (a reader joins them with "\n" again), then the blank line that
// dispatches it.
func (w *Writer) Event(id, event string, data []byte) error {
	if strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(event, "\r\n") {
		return ErrBadField
	}
	b := w.buf[:0]
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if event != "" {
		b = append(append(append(b, "event: "...), event...), '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			b = append(append(append(b, "data: "...), data...), '\n')
			break
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Comment writes a comment line, which readers ignore; a line break in
// text starts another comment line.
func (w *Writer) Comment(text string) error {
	b := w.buf[:0]
	for line := range strings.Lines(text) {
		b = append(append(append(b, ": "...), strings.TrimRight(line, "\r\n")...), '\n')
	}
	if text == "" {
		b = append(b, ":\n"...)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Retry tells the reader how long to wait before reconnecting.
func (w *Writer) Retry(d time.Duration) error {
	b := append(strconv.AppendInt(append(w.buf[:0], "retry: "...), d.Milliseconds(), 10), '\n', '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}
