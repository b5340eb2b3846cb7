package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestWriterRoundTrip(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	cases := []struct {
		id, event, data string
	}{
		{"1", "turn.started", `{"type":"turn.started"}`},
		{"", "message.delta", "two\nlines"},
		{"3", "", "crlf\r\nand cr\rend"},
		{"", "", ""},
	}
	if err := w.Retry(1500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if err := w.Event(c.id, c.event, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
		if err := w.Comment("keep-alive\nsecond"); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(buf.String(), "retry: 1500\n\n") {
		t.Errorf("retry frame: %q", buf.String()[:20])
	}
	r := NewReader(&buf)
	lastID := ""
	for _, c := range cases {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("reading %q: %v", c.data, err)
		}
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(c.data)
		if c.id != "" {
			lastID = c.id
		}
		if ev.Event != c.event || ev.Data != want || ev.ID != lastID {
			t.Errorf("got %+v, want event %q data %q id %q", ev, c.event, want, lastID)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %v", err)
	}
}

func TestWriterRefusesBrokenFraming(t *testing.T) {
	t.Parallel()
	w := NewWriter(io.Discard)
	for _, c := range [][2]string{{"1\n2", "x"}, {"1", "a\rb"}, {"\x00", "x"}} {
		if err := w.Event(c[0], c[1], nil); !errors.Is(err, ErrBadField) {
			t.Errorf("Event(%q, %q): %v, want ErrBadField", c[0], c[1], err)
		}
	}
}
