package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// A step of the agent stores one message and a few events; these measure
// each append on its own.

func BenchmarkAppendMessage(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	newSession(b, s, "s")
	m := protocol.Message{Role: protocol.RoleAssistant, Content: "Here is the plan: read the file, then edit it.",
		ToolCalls: []protocol.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"main.go"}`}},
		Usage:     &protocol.Usage{InputTokens: 1200, OutputTokens: 80}}
	b.ReportAllocs()
	for b.Loop() {
		mm := m
		if _, err := s.AppendMessage(ctx, "s", &mm); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	newSession(b, s, "s")
	ok := true
	e := protocol.Event{Type: protocol.EventToolCompleted, SessionID: "s", TurnID: "t1",
		ToolCallID: "call_1", ToolName: "read", Summary: "read main.go", OK: &ok, Preview: "package main", DurationMS: 3, Step: 1}
	b.ReportAllocs()
	for b.Loop() {
		ee := e
		if err := s.AppendEvent(ctx, &ee); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStep is one agent step: a message and three events.
func BenchmarkStep(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	newSession(b, s, "s")
	b.ReportAllocs()
	for b.Loop() {
		m := protocol.Message{Role: protocol.RoleAssistant, Content: "done"}
		if _, err := s.AppendMessage(ctx, "s", &m); err != nil {
			b.Fatal(err)
		}
		for _, typ := range []protocol.EventType{protocol.EventMessageCompleted, protocol.EventUsage, protocol.EventSessionUpdated} {
			e := protocol.Event{Type: typ, SessionID: "s", Message: &m}
			if err := s.AppendEvent(ctx, &e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkOpenFirstWrite is what every mx-claw process pays before its
// first request: open an existing store, store one event, read the
// session, close.
func BenchmarkOpenFirstWrite(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "mx-claw.db")
	s := openAt(b, path)
	newSession(b, s, "s")
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AppendEvent(ctx, &protocol.Event{Type: protocol.EventTurnStarted, SessionID: "s"}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.GetSession(ctx, "s"); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepBatches is what the agent stores for one step that reads a
// file: the answer with its tool call, events, the session's new usage and
// the permission decision in one batch; the result, its event and the
// file's version in another.
func BenchmarkStepBatches(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	sess := newSession(b, s, "s")
	content := strings.Repeat("package p\n\nconst Version0 = 1\n", 20)
	ok := true
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("call_%d", i)
		answer := &protocol.Message{Role: protocol.RoleAssistant, Model: "p/m",
			ToolCalls: []protocol.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"pkg/p00/f000.go"}`}},
			Usage:     &protocol.Usage{InputTokens: 4000, OutputTokens: 30}}
		sess.Usage.Add(*answer.Usage)
		if err := s.AppendBatch(ctx, "s", Batch{
			Messages: []*protocol.Message{answer},
			Events: []*protocol.Event{
				{Type: protocol.EventMessageCompleted, SessionID: "s", Message: answer},
				{Type: protocol.EventUsage, SessionID: "s", Usage: answer.Usage},
				{Type: protocol.EventToolStarted, SessionID: "s", ToolCallID: id, ToolName: "read_file", Summary: "Read pkg/p00/f000.go"},
			},
			UpdateSession: sess,
			Audit:         []*protocol.AuditEntry{{SessionID: "s", Tool: "read_file", Summary: "Read pkg/p00/f000.go", Decision: "allow", Source: "mode"}},
		}); err != nil {
			b.Fatal(err)
		}
		result := &protocol.Message{Role: protocol.RoleTool, ToolCallID: id, ToolName: "read_file", Content: content}
		if err := s.AppendBatch(ctx, "s", Batch{
			Messages: []*protocol.Message{result},
			Events:   []*protocol.Event{{Type: protocol.EventToolCompleted, SessionID: "s", ToolCallID: id, OK: &ok, Message: result}},
			Files:    []protocol.FileVersion{{Path: "pkg/p00/f000.go", Size: int64(len(content)), SHA256: "abc"}},
		}); err != nil {
			b.Fatal(err)
		}
	}
}
