package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

func testMessagesRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})
	NewSession(t, s, "s1")
	NewSession(t, s, "s2")

	msgs := []protocol.Message{
		{Role: protocol.RoleSystem, Content: "you are"},
		{Role: protocol.RoleUser, Content: "hi", TurnID: "t1"},
		{Role: protocol.RoleAssistant, Content: "calling", Reasoning: "hmm", TurnID: "t1",
			ToolCalls: []protocol.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
			Usage:     &protocol.Usage{InputTokens: 5, OutputTokens: 6}},
		{Role: protocol.RoleTool, Content: "Tool failed: nope", ToolCallID: "c1", ToolName: "read", IsError: true},
	}
	for i := range msgs {
		clock.Add(time.Second)
		m := msgs[i]
		seq, err := s.AppendMessage(ctx, "s1", &m)
		if err != nil {
			t.Fatal(err)
		}
		if seq != int64(i+1) || m.Seq != seq {
			t.Fatalf("AppendMessage #%d: seq %d, m.Seq %d", i, seq, m.Seq)
		}
		msgs[i].Seq = seq
	}
	if seq, err := s.AppendMessage(ctx, "s2", &protocol.Message{Role: protocol.RoleUser}); err != nil || seq != 1 {
		t.Errorf("first message of s2: seq %d, %v", seq, err)
	}

	got, err := s.Messages(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, msgs) {
		t.Errorf("Messages = %+v\nwant       %+v", got, msgs)
	}
	got, _ = s.Messages(ctx, "s1", 2)
	if !reflect.DeepEqual(got, msgs[2:]) {
		t.Errorf("Messages(after 2) = %+v", got)
	}
	got, _ = s.Messages(ctx, "s1", 4)
	if got == nil || len(got) != 0 {
		t.Errorf("Messages(after 4) = %#v, want empty", got)
	}

	sess, _ := s.GetSession(ctx, "s1")
	if sess.MessageCount != 4 || !sess.UpdatedAt.Equal(clock.Now()) {
		t.Errorf("session after appends: count %d, updated %v (now %v)", sess.MessageCount, sess.UpdatedAt, clock.Now())
	}

	m := protocol.Message{Role: protocol.RoleUser}
	if _, err := s.AppendMessage(ctx, "nope", &m); !errors.Is(err, store.ErrNotFound) || m.Seq != 0 {
		t.Errorf("AppendMessage(nope) = %v, Seq %d", err, m.Seq)
	}
}

func testEventsRoundTrip(t *testing.T, b Backend) {
	ctx := context.Background()
	clock := NewClock()
	s := b.Open(t, Options{Clock: clock.Now})
	sess := NewSession(t, s, "s1")
	ok := true
	local := time.Date(2026, 3, 1, 13, 0, 0, 123_456_789, time.FixedZone("CET", 3600))

	events := []protocol.Event{
		{Type: protocol.EventSessionCreated, SessionID: "s1", Model: "p/m", Session: sess, Timestamp: local},
		{Type: protocol.EventTurnStarted, SessionID: "s1", TurnID: "t1"}, // zero Timestamp: now
		{Type: protocol.EventToolCompleted, SessionID: "s1", TurnID: "t1", ToolCallID: "c1", ToolName: "shell",
			Arguments: json.RawMessage(`{"cmd":"ls"}`), Summary: "ls", OK: &ok, Preview: "a\nb", DurationMS: 12, Step: 1,
			Message: &protocol.Message{Seq: 3, Role: protocol.RoleTool, Content: "a\nb", ToolCallID: "c1"}},
		{Type: protocol.EventUsage, SessionID: "s1", Usage: &protocol.Usage{InputTokens: 9}},
		{Type: protocol.EventTurnFailed, SessionID: "s1", Error: "x", Status: protocol.StatusFailed},
	}
	for i := range events {
		if err := s.AppendEvent(ctx, &events[i]); err != nil {
			t.Fatal(err)
		}
		if events[i].Sequence != int64(i+1) {
			t.Fatalf("event #%d: Sequence %d", i, events[i].Sequence)
		}
	}
	if !events[0].Timestamp.Equal(local) || events[0].Timestamp.Location() != time.UTC {
		t.Errorf("Timestamp = %v, want %v in UTC", events[0].Timestamp, local)
	}
	if !events[1].Timestamp.Equal(clock.Now()) {
		t.Errorf("zero Timestamp became %v, want %v", events[1].Timestamp, clock.Now())
	}

	got, err := s.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, events) {
		t.Errorf("Events = %+v\nwant     %+v", got, events)
	}
	for _, tc := range []struct {
		after      int64
		limit      int
		start, end int
	}{
		{0, 2, 0, 2},
		{2, 0, 2, 5},
		{2, 2, 2, 4},
		{5, 0, 5, 5},
		{4, 10, 4, 5},
	} {
		got, err := s.Events(ctx, "s1", tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, events[tc.start:tc.end]) {
			t.Errorf("Events(after %d, limit %d) = %d events, want %v", tc.after, tc.limit, len(got), events[tc.start:tc.end])
		}
	}

	// The stored payload is the whole event, sequence included.
	payload := b.QueryString(t, s, `SELECT payload FROM events WHERE session_id = 's1' AND sequence = 2`)
	var decoded protocol.Event
	if err := json.Unmarshal([]byte(payload), &decoded); err != nil || decoded.Sequence != 2 || decoded.Type != protocol.EventTurnStarted {
		t.Errorf("payload %s decodes to %+v, %v", payload, decoded, err)
	}

	e := protocol.Event{Type: protocol.EventTurnStarted, SessionID: "nope"}
	if err := s.AppendEvent(ctx, &e); !errors.Is(err, store.ErrNotFound) || e.Sequence != 0 {
		t.Errorf("AppendEvent(nope) = %v, Sequence %d", err, e.Sequence)
	}
}

// TestConcurrentAppends appends events and messages from 8 goroutines on
// each of two handles of one database (two processes, as far as the store can
// tell) and checks that sequences are 1..N, each exactly once.
func testConcurrentAppends(t *testing.T, be Backend) {
	first := be.Open(t, Options{})
	second := be.Another(t, first, Options{})
	NewSession(t, first, "s")
	const goroutines, perGoroutine = 8, 25
	handles := []store.Store{first, second}

	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines*len(handles))
	var mu sync.Mutex
	eventSeqs, messageSeqs := map[int64]string{}, map[int64]string{}
	for h, s := range handles {
		for g := range goroutines {
			wg.Go(func() {
				for i := range perGoroutine {
					tag := fmt.Sprintf("h%d-g%d-%d", h, g, i)
					e := protocol.Event{Type: protocol.EventUsage, SessionID: "s", TurnID: tag}
					if err := s.AppendEvent(ctx, &e); err != nil {
						errs <- err
						return
					}
					m := protocol.Message{Role: protocol.RoleUser, Content: tag}
					seq, err := s.AppendMessage(ctx, "s", &m)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					eventSeqs[e.Sequence] = tag
					messageSeqs[seq] = tag
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	n := len(handles) * goroutines * perGoroutine
	events, err := second.Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := first.Messages(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != n || len(eventSeqs) != n || len(msgs) != n || len(messageSeqs) != n {
		t.Fatalf("got %d events (%d distinct), %d messages (%d distinct), want %d",
			len(events), len(eventSeqs), len(msgs), len(messageSeqs), n)
	}
	for i := range n {
		if events[i].Sequence != int64(i+1) || events[i].TurnID != eventSeqs[int64(i+1)] {
			t.Fatalf("event %d: %+v, appended as %q", i, events[i], eventSeqs[int64(i+1)])
		}
		if msgs[i].Seq != int64(i+1) || msgs[i].Content != messageSeqs[int64(i+1)] {
			t.Fatalf("message %d: %+v, appended as %q", i, msgs[i], messageSeqs[int64(i+1)])
		}
	}
	sess, _ := first.GetSession(ctx, "s")
	if sess.MessageCount != int64(n) {
		t.Errorf("MessageCount = %d, want %d", sess.MessageCount, n)
	}
}

func testAppendBatch(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	NewSession(t, s, "s2")
	if _, err := s.AppendMessage(ctx, "s1", &protocol.Message{Role: protocol.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	m := &protocol.Message{Role: protocol.RoleAssistant, Content: "hello"}
	e1 := &protocol.Event{Type: protocol.EventMessageCompleted, SessionID: "s1", Message: m}
	e2 := &protocol.Event{Type: protocol.EventUsage, SessionID: "s1", Usage: &protocol.Usage{InputTokens: 3}}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: []*protocol.Message{m}, Events: []*protocol.Event{e1, e2},
		Audit: []*protocol.AuditEntry{{SessionID: "s1", Tool: "read_file", Decision: "allow"}},
		Files: []protocol.FileVersion{{Path: "/a", SHA256: "00"}}}); err != nil {
		t.Fatal(err)
	}
	if m.Seq != 2 || e1.Sequence != 1 || e2.Sequence != 2 {
		t.Errorf("seq %d, sequences %d %d", m.Seq, e1.Sequence, e2.Sequence)
	}
	evs, err := s.Events(ctx, "s1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Message == nil || evs[0].Message.Seq != 2 {
		t.Fatalf("stored events %+v: the message in the event must carry its Seq", evs)
	}
	if a, _ := s.Audit(ctx, "s1", 0); len(a) != 1 || a[0].Tool != "read_file" {
		t.Errorf("audit of the batch: %+v", a)
	}
	if f, _ := s.Files(ctx, "s1"); len(f) != 1 || f[0].Path != "/a" {
		t.Errorf("file versions of the batch: %+v", f)
	}

	// A batch that fails stores nothing and leaves the values alone.
	bad := &protocol.Message{Role: protocol.RoleTool, Content: "x"}
	wrong := &protocol.Event{Type: protocol.EventUsage, SessionID: "s2"}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: []*protocol.Message{bad}, Events: []*protocol.Event{wrong}}); err == nil {
		t.Fatal("a batch with another session's event was stored")
	}
	if bad.Seq != 0 || wrong.Sequence != 0 {
		t.Errorf("failed batch changed seq %d / sequence %d", bad.Seq, wrong.Sequence)
	}
	msgs, err := s.Messages(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Errorf("%d messages after a failed batch, want 2", len(msgs))
	}
}
