package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, r io.Reader) ([]Event, error) {
	t.Helper()
	rd := NewReader(r)
	var evs []Event
	for {
		ev, err := rd.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{
			name: "empty",
			in:   "",
		},
		{
			name: "one event",
			in:   "data: hello\n\n",
			want: []Event{{Data: "hello"}},
		},
		{
			name: "no space after colon",
			in:   "data:hello\n\n",
			want: []Event{{Data: "hello"}},
		},
		{
			name: "only one leading space is removed",
			in:   "data:  two spaces\n\n",
			want: []Event{{Data: " two spaces"}},
		},
		{
			name: "multi-line data",
			in:   "data: a\ndata: b\ndata:\ndata: c\n\n",
			want: []Event{{Data: "a\nb\n\nc"}},
		},
		{
			name: "empty data is still an event",
			in:   "data:\n\n",
			want: []Event{{Data: ""}},
		},
		{
			name: "field without colon",
			in:   "data\n\n",
			want: []Event{{Data: ""}},
		},
		{
			name: "event name and id",
			in:   "event: error\nid: 7\ndata: {\"x\":1}\n\n",
			want: []Event{{Event: "error", Data: `{"x":1}`, ID: "7"}},
		},
		{
			name: "id carries over, name does not",
			in:   "id: 1\nevent: a\ndata: x\n\ndata: y\n\nid\ndata: z\n\n",
			want: []Event{
				{Event: "a", Data: "x", ID: "1"},
				{Data: "y", ID: "1"},
				{Data: "z", ID: ""},
			},
		},
		{
			name: "id with NUL is ignored",
			in:   "id: 1\ndata: x\n\nid: a\x00b\ndata: y\n\n",
			want: []Event{{Data: "x", ID: "1"}, {Data: "y", ID: "1"}},
		},
		{
			name: "comments and keep-alives",
			in:   ": keep-alive\n\n:\ndata: a\n: inside\n\n: OPENROUTER PROCESSING\n\n",
			want: []Event{{Data: "a"}},
		},
		{
			name: "event without data is not dispatched",
			in:   "event: ping\n\ndata: a\n\n",
			want: []Event{{Data: "a"}},
		},
		{
			name: "retry and unknown fields ignored",
			in:   "retry: 1000\nfoo: bar\ndata: a\n\n",
			want: []Event{{Data: "a"}},
		},
		{
			name: "CRLF",
			in:   "event: e\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
			want: []Event{{Event: "e", Data: "a\nb"}, {Data: "c"}},
		},
		{
			name: "lone CR",
			in:   "data: a\rdata: b\r\rdata: c\r\r",
			want: []Event{{Data: "a\nb"}, {Data: "c"}},
		},
		{
			name: "mixed endings",
			in:   "data: a\r\ndata: b\rdata: c\n\r\n",
			want: []Event{{Data: "a\nb\nc"}},
		},
		{
			name: "final event without blank line",
			in:   "data: a\n\ndata: b\n",
			want: []Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name: "final event without any line ending",
			in:   "data: a\n\ndata: [DONE]",
			want: []Event{{Data: "a"}, {Data: "[DONE]"}},
		},
		{
			name: "BOM at start",
			in:   "\xEF\xBB\xBFdata: a\n\n",
			want: []Event{{Data: "a"}},
		},
		{
			name: "BOM later is data",
			in:   "data: a\n\ndata: \xEF\xBB\xBFb\n\n",
			want: []Event{{Data: "a"}, {Data: "\xEF\xBB\xBFb"}},
		},
		{
			name: "colon in value",
			in:   "data: {\"a\":\"b:c\"}\n\n",
			want: []Event{{Data: `{"a":"b:c"}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Whole input, and one byte at a time: the result must not
			// depend on how reads split the stream.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := readAll(t, r)
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if !equalEvents(got, tt.want) {
					t.Fatalf("events:\n got %q\nwant %q", got, tt.want)
				}
			}
		})
	}
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderErrorAfterEOFIsSticky(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("data: a\n\n"))
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := rd.Next(); err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
	}
}

func TestReaderReadErrorDropsPartialEvent(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: {\"cut"), iotest.ErrReader(boom))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if want := []Event{{Data: "a"}}; !equalEvents(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
}

func TestReaderHugeLine(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5<<20)
	got, err := readAll(t, strings.NewReader("data: "+big+"\n\ndata: small\n\n"))
	if err != io.EOF {
		t.Fatalf("err = %v", err)
	}
	if len(got) != 2 || got[0].Data != big || got[1].Data != "small" {
		t.Fatalf("got %d events", len(got))
	}
}

func TestReaderLineTooLong(t *testing.T) {
	t.Parallel()
	in := io.MultiReader(strings.NewReader("data: "), &repeatReader{b: 'x', n: MaxLineSize + 10})
	_, err := readAll(t, in)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

// TestReaderEventTooLong: an event of many data lines, each short, is
// capped like one line, so a stream without blank lines cannot make the
// reader hold it all.
func TestReaderEventTooLong(t *testing.T) {
	t.Parallel()
	line := "data: " + strings.Repeat("y", 1<<20) + "\n"
	var b strings.Builder
	for b.Len() <= MaxLineSize+len(line) {
		b.WriteString(line)
	}
	_, err := readAll(t, strings.NewReader(b.String()))
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

// repeatReader yields n copies of b without holding them in memory.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.n)]
	for i := range p {
		p[i] = r.b
	}
	r.n -= len(p)
	return len(p), nil
}

func TestNextRawReusesBuffers(t *testing.T) {
	// Not parallel: AllocsPerRun needs the process to itself.
	in := strings.Repeat("event: message\ndata: {\"choices\":[]}\n\n", 50)
	rd := NewReader(strings.NewReader(in))
	// Warm up, then count.
	if _, err := rd.NextRaw(); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(40, func() {
		ev, err := rd.NextRaw()
		if err != nil || string(ev.Data) != `{"choices":[]}` || string(ev.Event) != "message" {
			t.Fatalf("ev = %q, %v", ev.Data, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("NextRaw allocs per event = %v, want 0", allocs)
	}
}

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	for range 100 {
		buf.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}]}` + "\n\n")
	}
	buf.WriteString(": keep-alive\n\ndata: [DONE]\n\n")
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		rd := NewReader(bytes.NewReader(in))
		for {
			if _, err := rd.NextRaw(); err != nil {
				break
			}
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n",
		"event: error\r\ndata: {}\r\n\r\n",
		"data: a\rdata: b\r\r",
		": c\nid: 1\ndata\n\ndata: x",
		"\xEF\xBB\xBFdata: a\n",
		"id: \x00\ndata:\n\n",
		"\r\n\r\r\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, err := readAll(t, bytes.NewReader(in))
		if err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
		bytewise, err := readAll(t, iotest.OneByteReader(bytes.NewReader(in)))
		if err != io.EOF {
			t.Fatalf("one byte at a time: err = %v, want io.EOF", err)
		}
		if !equalEvents(whole, bytewise) {
			t.Fatalf("events depend on read sizes:\n%q\n%q", whole, bytewise)
		}
		if len(whole) > bytes.Count(in, []byte("data"))+1 {
			t.Fatalf("%d events from %d data fields", len(whole), bytes.Count(in, []byte("data")))
		}
	})
}

func TestReaderReset(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("id: 1\nevent: x\ndata: first\n\ndata: cut"))
	if ev, err := rd.Next(); err != nil || ev != (Event{Event: "x", Data: "first", ID: "1"}) {
		t.Fatalf("Next = %+v, %v", ev, err)
	}
	// Reset mid-stream: nothing of the old stream may leak into the new.
	rd.Reset(strings.NewReader("data: second\n\n"))
	if ev, err := rd.Next(); err != nil || ev != (Event{Data: "second"}) {
		t.Fatalf("after Reset: Next = %+v, %v", ev, err)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	rd.Reset(strings.NewReader("data: third\n\n"))
	if ev, err := rd.Next(); err != nil || ev.Data != "third" {
		t.Fatalf("after Reset at EOF: Next = %+v, %v", ev, err)
	}
}

func TestReaderResetNil(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("data: a\n\n"))
	rd.Reset(nil)
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	rd.Reset(strings.NewReader("data: b\n\n"))
	if ev, err := rd.Next(); err != nil || ev.Data != "b" {
		t.Fatalf("Next = %+v, %v", ev, err)
	}
}
