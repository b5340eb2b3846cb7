package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// fakeBackend answers from memory.
type fakeBackend struct {
	got  TaskRequest
	msgs []protocol.Message
}

func (f *fakeBackend) RunTask(_ context.Context, req TaskRequest) (TaskResult, error) {
	f.got = req
	if req.Prompt == "break" {
		return TaskResult{SessionID: "s1", Answer: "partial", Status: "failed", Error: "Maximum agent iterations reached (8)"}, nil
	}
	if req.SessionID == "missing" {
		return TaskResult{}, errors.New("session missing does not exist")
	}
	return TaskResult{SessionID: "s1", Answer: "done: " + req.Prompt, Status: "idle"}, nil
}

func (f *fakeBackend) Sessions(context.Context, string, int) ([]protocol.Session, error) {
	return []protocol.Session{{ID: "s1", Title: "t", Status: protocol.StatusIdle}}, nil
}

func (f *fakeBackend) Transcript(_ context.Context, id string) (*protocol.Session, []protocol.Message, error) {
	return &protocol.Session{ID: id, Status: protocol.StatusIdle}, f.msgs, nil
}

func connect(t *testing.T, b Backend, opts Options) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := NewServer(b, opts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestRunTask(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{}
	cs := connect(t, b, Options{})
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"prompt": "fix it", "cwd": "/w", "maxIterations": 3}})
	if err != nil || res.IsError || text(res) != "done: fix it\n\n[mx-claw session s1, idle]" {
		t.Fatalf("run_task: %v %q", err, text(res))
	}
	if b.got != (TaskRequest{Prompt: "fix it", Workspace: "/w", MaxIterations: 3}) {
		t.Fatalf("request %+v", b.got)
	}
	res, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"prompt": "break"}})
	if !res.IsError || !strings.Contains(text(res), "The task failed: Maximum agent iterations") || !strings.Contains(text(res), "s1") {
		t.Fatalf("failed task: %q", text(res))
	}
	for _, args := range []map[string]any{{"prompt": " "}, {"prompt": "x", "sessionId": "missing"}} {
		if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: args}); err != nil || !res.IsError {
			t.Errorf("%v: %v %q", args, err, text(res))
		}
	}
}

func TestReadTranscriptCapped(t *testing.T) {
	t.Parallel()
	b := &fakeBackend{msgs: []protocol.Message{
		{Seq: 1, Role: protocol.RoleSystem, Content: "prompt"},
		{Seq: 2, Role: protocol.RoleUser, Content: strings.Repeat("a", 3000)},
		{Seq: 3, Role: protocol.RoleAssistant, Content: "short"},
		{Seq: 4, Role: protocol.RoleAssistant, Content: strings.Repeat("b", 1500)},
	}}
	cs := connect(t, b, Options{MaxTranscriptBytes: 2048})
	read := func(after int64) Transcript {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_transcript", Arguments: map[string]any{"sessionId": "s1", "afterSeq": after}})
		if err != nil || res.IsError {
			t.Fatalf("read_transcript: %v %q", err, text(res))
		}
		var tr Transcript
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &tr)
		return tr
	}
	tr := read(0)
	// The system prompt is left out; a message alone over the cap is cut.
	if len(tr.Messages) != 2 || tr.Messages[0].Seq != 2 || tr.Messages[1].Seq != 3 || !tr.More ||
		!strings.Contains(tr.Messages[0].Content, "[1976 bytes not shown]") {
		t.Fatalf("first page: %d messages, more %v", len(tr.Messages), tr.More)
	}
	tr = read(3)
	if len(tr.Messages) != 1 || tr.Messages[0].Seq != 4 || tr.More {
		t.Fatalf("second page: %d messages, more %v", len(tr.Messages), tr.More)
	}
}
