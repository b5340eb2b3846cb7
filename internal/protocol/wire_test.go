package protocol_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// The wire format is pinned by two checked-in files: a golden stream of one
// event of every type (testdata/events.jsonl) and the JSON Schema of Event
// generated from the Go type (event.schema.json, for clients). A renamed
// tag, a changed type or a new event type without a sample fails these
// tests; `go test ./internal/protocol -update` rewrites both files when
// the change is meant, and the diff shows it in review.

var update = flag.Bool("update", false, "rewrite testdata/events.jsonl and event.schema.json from the Go types")

const (
	goldenPath = "testdata/events.jsonl"
	schemaPath = "event.schema.json"
)

// samples returns one event of every type, with the payload fields that
// type carries.
func samples() []protocol.Event {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	ok, failed := true, false
	cost := 0.0125
	usage := &protocol.Usage{InputTokens: 1200, OutputTokens: 80, CachedTokens: 1024, ReasoningTokens: 20}
	call := protocol.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"main.go"}`}
	session := &protocol.Session{ID: "s1", Title: "fix the test", Workspace: "/work/project", Model: "deepseek/deepseek-chat",
		Status: protocol.StatusIdle, CreatedAt: at, UpdatedAt: at, Usage: *usage, MessageCount: 4, CostUSD: cost, ContextPercent: 3.5}
	base := func(t protocol.EventType, seq int64) protocol.Event {
		e := protocol.Event{Type: t, SessionID: "s1", TurnID: "t1", Sequence: seq, Timestamp: at}
		return e
	}
	with := func(e protocol.Event, f func(*protocol.Event)) protocol.Event { f(&e); return e }
	return []protocol.Event{
		with(base(protocol.EventSessionCreated, 1), func(e *protocol.Event) {
			e.TurnID, e.Model, e.Session = "", session.Model, session
		}),
		with(base(protocol.EventSessionUpdated, 2), func(e *protocol.Event) { e.Status = protocol.StatusRunning }),
		with(base(protocol.EventTurnStarted, 3), func(e *protocol.Event) { e.Model = session.Model }),
		with(base(protocol.EventReasoningDelta, 0), func(e *protocol.Event) { e.Text, e.Step = "Let me look", 1 }),
		with(base(protocol.EventMessageDelta, 0), func(e *protocol.Event) { e.Text, e.Step = "I will read", 1 }),
		with(base(protocol.EventMessageCompleted, 4), func(e *protocol.Event) {
			e.Step, e.FinishReason = 1, "tool_calls"
			e.Message = &protocol.Message{Seq: 3, Role: protocol.RoleAssistant, Content: "I will read main.go.",
				Reasoning: "Let me look", ToolCalls: []protocol.ToolCall{call}, TurnID: "t1", Usage: usage, Model: session.Model}
		}),
		with(base(protocol.EventToolStarted, 5), func(e *protocol.Event) {
			e.ToolCallID, e.ToolName, e.Arguments, e.Summary, e.Step = call.ID, call.Name, json.RawMessage(call.Arguments), "Read main.go", 1
		}),
		with(base(protocol.EventToolOutput, 0), func(e *protocol.Event) {
			e.ToolCallID, e.ToolName, e.Text, e.Step = "call_2", "run_command", "ok  \tpkg\t0.01s\n", 1
			e.ParentSessionID, e.ParentToolCallID = "s0", "call_task"
		}),
		with(base(protocol.EventToolCompleted, 6), func(e *protocol.Event) {
			e.ToolCallID, e.ToolName, e.Summary, e.OK, e.Preview, e.DurationMS, e.Step = call.ID, call.Name, "Read main.go", &ok, "1\tpackage main", 3, 1
			e.Message = &protocol.Message{Seq: 4, Role: protocol.RoleTool, Content: "1\tpackage main", ToolCallID: call.ID, ToolName: call.Name, TurnID: "t1"}
			e.Changes = []protocol.FileChange{{Path: "main.go", Before: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "e69de29", Size: 12},
				After: protocol.FileState{Mode: protocol.ModeRegular | 0o644, OID: "a1b2c3d", Size: 14}}}
		}),
		with(base(protocol.EventPermissionRequested, 7), func(e *protocol.Event) {
			e.RequestID, e.ToolCallID, e.ToolName, e.Summary, e.Step = "r1", "call_3", "run_command", "Run go test ./...", 2
			e.Arguments = json.RawMessage(`{"command":"go test ./..."}`)
		}),
		with(base(protocol.EventPermissionResolved, 8), func(e *protocol.Event) {
			e.RequestID, e.ToolCallID, e.ToolName, e.Summary, e.OK, e.Text = "r1", "call_3", "run_command", "Run go test ./...", &failed, "not now"
			e.Status = protocol.SessionStatus(protocol.ApprovalRejected)
		}),
		with(base(protocol.EventUsage, 9), func(e *protocol.Event) {
			e.Usage, e.Step, e.ContextPercent, e.CostUSD = usage, 2, 3.5, &cost
		}),
		with(base(protocol.EventCompaction, 10), func(e *protocol.Event) {
			e.Step, e.Text = 3, "compacted 12 messages (about 9000 tokens) into a summary"
			e.Compaction = &protocol.Compaction{ID: "c1", UpToSeq: 14, Summary: "## Goal\nFix the test.", Ledger: "## Ledger\n",
				Trigger: "auto", CreatedAt: at}
		}),
		with(base(protocol.EventTodoUpdated, 11), func(e *protocol.Event) {
			e.ToolCallID, e.Step = "call_4", 3
			e.Todos = []protocol.Todo{{ID: "1", Content: "reproduce", Status: protocol.TodoCompleted},
				{ID: "2", Content: "fix", Status: protocol.TodoInProgress}, {Content: "document", Status: protocol.TodoPending}}
		}),
		with(base(protocol.EventRetry, 0), func(e *protocol.Event) {
			e.Attempt, e.DelayMS, e.Error, e.Step = 1, 500, "429 Too Many Requests", 4
		}),
		with(base(protocol.EventWarning, 12), func(e *protocol.Event) { e.Text = "AGENTS.md was cut to 32 KiB" }),
		with(base(protocol.EventHookWarning, 13), func(e *protocol.Event) { e.Text = "PreToolUse hook timed out after 60s" }),
		with(base(protocol.EventInputQueued, 14), func(e *protocol.Event) {
			e.TurnID, e.Text = "", "and then the docs"
			e.Queued = []protocol.QueuedInput{{ID: 3, SessionID: "s1", Content: "and then the docs", CreatedAt: at}}
		}),
		with(base(protocol.EventInputEdited, 19), func(e *protocol.Event) {
			e.TurnID, e.Queued = "", []protocol.QueuedInput{{ID: 3, SessionID: "s1", Content: "and then the README", CreatedAt: at}}
		}),
		with(base(protocol.EventInputRemoved, 20), func(e *protocol.Event) {
			e.TurnID, e.Queued = "", []protocol.QueuedInput{{ID: 3, SessionID: "s1", Content: "and then the README", CreatedAt: at}}
		}),
		with(base(protocol.EventInputReturned, 21), func(e *protocol.Event) {
			e.Queued = []protocol.QueuedInput{{ID: 4, SessionID: "s1", Content: "one more thing", CreatedAt: at}}
		}),
		with(base(protocol.EventContextFrozen, 22), func(e *protocol.Event) {
			e.Context = &protocol.FrozenContext{
				Memory: []protocol.FrozenMemory{{Label: "USER.md", Path: "/home/u/.mx-claw/memory/USER.md", Bytes: 120, SHA256: "ab12"}},
				Skills: []protocol.FrozenSkill{{Name: "release", Description: "Cut a release", AllowedTools: []string{"run_command"},
					Dir: "/home/u/.mx-claw/skills/active/release", Source: "user", Listed: true}},
			}
		}),
		with(base(protocol.EventMemoryCandidate, 23), func(e *protocol.Event) {
			e.Candidate = &protocol.MemoryCandidate{ID: "m1", File: "MEMORY.md", Text: "Use tabs in Makefiles.",
				Quote: "remember that Makefiles use tabs", MessageSeq: 2, CreatedAt: at}
		}),
		with(base(protocol.EventCheckpointRestored, 25), func(e *protocol.Event) {
			e.TurnID = ""
			e.Restore = &protocol.Restore{TurnID: "t1", Restored: []string{"main.go"}, Conflicts: []string{"go.mod"}}
		}),
		with(base(protocol.EventConversationRewound, 26), func(e *protocol.Event) {
			e.TurnID, e.Restore = "", &protocol.Restore{ToSeq: 5, Restored: []string{"main.go"}}
		}),
		with(base(protocol.EventImportNote, 27), func(e *protocol.Event) {
			e.TurnID, e.Summary, e.Text = "", "a record of type file-history-snapshot", `{"type":"file-history-snapshot"}`
		}),
		with(base(protocol.EventSkillProposed, 24), func(e *protocol.Event) {
			e.Proposal = &protocol.SkillProposal{Name: "flaky-test", Description: "Reproduce and fix a flaky test",
				Dir: "/home/u/.mx-claw/skills/proposed/flaky-test", TurnID: "t1"}
		}),
		with(base(protocol.EventTurnPaused, 15), func(e *protocol.Event) { e.RequestID = "r2" }),
		with(base(protocol.EventTurnCompleted, 16), func(e *protocol.Event) {
			e.Usage, e.CostUSD, e.ContextPercent, e.FirstTokenMS, e.ModelMS, e.ToolMS, e.DurationMS = usage, &cost, 3.5, 420, 2100, 300, 2600
		}),
		with(base(protocol.EventTurnFailed, 17), func(e *protocol.Event) {
			e.Error, e.Code = "Maximum agent iterations reached (8)", protocol.CodeMaxIterations
		}),
		with(base(protocol.EventTurnCancelled, 18), func(e *protocol.Event) {}),
		with(base(protocol.EventStreamReady, 0), func(e *protocol.Event) { e.TurnID, e.Sequence, e.Session = "", 18, session }),
		with(base(protocol.EventStreamHeartbeat, 0), func(e *protocol.Event) { e.TurnID = "" }),
		with(base(protocol.EventStreamClosing, 0), func(e *protocol.Event) { e.TurnID, e.Text = "", "the server is shutting down" }),
	}
}

// marshalAs encodes each event as typ, a struct type with Event's fields
// (the real one, or a deliberately broken copy), one line each.
func marshalAs(t *testing.T, typ reflect.Type, evs []protocol.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, e := range evs {
		line, err := json.Marshal(reflect.ValueOf(e).Convert(typ).Interface())
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// diffLines returns the first line where got and want differ, or "".
func diffLines(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

// enumSchemas gives every enum-like string type of the package its values
// (read from the package's constants), so the schema lists them.
func enumSchemas(t *testing.T) map[reflect.Type]*jsonschema.Schema {
	t.Helper()
	out := map[reflect.Type]*jsonschema.Schema{}
	for typ, name := range map[reflect.Type]string{
		reflect.TypeFor[protocol.EventType]():     "EventType",
		reflect.TypeFor[protocol.SessionStatus](): "SessionStatus",
		reflect.TypeFor[protocol.Role]():          "Role",
		reflect.TypeFor[protocol.TodoStatus]():    "TodoStatus",
		reflect.TypeFor[protocol.ErrorCode]():     "ErrorCode",
	} {
		values := constants(t, name)
		if name == "SessionStatus" {
			// permission.resolved carries the approval's status here.
			values = append(values, constants(t, "ApprovalStatus")...)
		}
		enum := make([]any, len(values))
		for i, v := range values {
			enum[i] = v
		}
		out[typ] = &jsonschema.Schema{Type: "string", Enum: enum}
	}
	out[reflect.TypeFor[time.Time]()] = &jsonschema.Schema{Type: "string", Format: "date-time"}
	out[reflect.TypeFor[json.RawMessage]()] = &jsonschema.Schema{Description: "any JSON value (a tool call's arguments)"}
	return out
}

// constants returns the values of the string constants of type typ
// declared in the package's source, in source order.
func constants(t *testing.T, typ string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						out = append(out, s)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no constants of type %s found", typ)
	}
	return out
}

// schemaFor generates the JSON Schema of typ, indented, as checked in.
func schemaFor(t *testing.T, typ reflect.Type) []byte {
	t.Helper()
	s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{TypeSchemas: enumSchemas(t)})
	if err != nil {
		t.Fatal(err)
	}
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = "mx-claw event (protocol.Event)"
	s.Description = "One event of a session, as `mx-claw run --json` prints it and the SSE stream sends it. Generated from internal/protocol; do not edit."
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

// check compares generated bytes with a checked-in file, or rewrites it
// under -update.
func check(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/protocol -update to write it)", err)
	}
	if d := diffLines(got, want); d != "" {
		t.Errorf("%s no longer matches the Go types (if the change is meant, run go test ./internal/protocol -update and review the diff)\n%s", path, d)
	}
}

func TestEventsGolden(t *testing.T) {
	check(t, goldenPath, marshalAs(t, reflect.TypeFor[protocol.Event](), samples()))
}

func TestEventSchema(t *testing.T) {
	check(t, schemaPath, schemaFor(t, reflect.TypeFor[protocol.Event]()))
}

// Every event type of the package has exactly one sample, and each golden
// line decodes to the sample it was made from and encodes back to itself.
func TestGoldenCoversEveryEventType(t *testing.T) {
	t.Parallel()
	var types []string
	for _, e := range samples() {
		types = append(types, string(e.Type))
	}
	want := constants(t, "EventType")
	slices.Sort(types)
	slices.Sort(want)
	if !slices.Equal(types, want) {
		t.Errorf("sampled event types %v\nwant every EventType constant %v", types, want)
	}
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Skipf("no golden file yet: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	evs := samples()
	if len(lines) != len(evs) {
		t.Fatalf("%d golden lines, %d samples", len(lines), len(evs))
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(schemaFor(t, reflect.TypeFor[protocol.Event]()), &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := resolved.Validate(v); err != nil {
			t.Errorf("line %d does not match the schema: %v", i+1, err)
		}
		var e protocol.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(e, evs[i]) {
			t.Errorf("line %d decodes to\n%+v\nwant\n%+v", i+1, e, evs[i])
		}
		again, _ := json.Marshal(e)
		if string(again) != l {
			t.Errorf("line %d does not encode back to itself:\n%s", i+1, again)
		}
	}
}

// renamedTag returns a copy of the struct type typ whose field's JSON name
// is name: the same Go type to the compiler, a different wire format.
func renamedTag(typ reflect.Type, field, name string) reflect.Type {
	fields := make([]reflect.StructField, typ.NumField())
	for i := range fields {
		f := typ.Field(i)
		if f.Name == field {
			_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			f.Tag = reflect.StructTag(`json:"` + name + "," + opts + `"`)
		}
		fields[i] = f
	}
	return reflect.StructOf(fields)
}

// The guards fail on a deliberately broken copy of Event: its toolCallId
// tag renamed to toolCallID, as a careless edit would.
func TestWireGuardsCatchARenamedTag(t *testing.T) {
	t.Parallel()
	broken := renamedTag(reflect.TypeFor[protocol.Event](), "ToolCallID", "toolCallID")
	golden, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Skipf("no golden file yet: %v", err)
	}
	if d := diffLines(marshalAs(t, broken, samples()), golden); !strings.Contains(d, `"toolCallID"`) {
		t.Errorf("the golden check misses a renamed tag: %q", d)
	}
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Skipf("no schema file yet: %v", err)
	}
	if d := diffLines(schemaFor(t, broken), schema); !strings.Contains(d, "toolCallID") {
		t.Errorf("the schema check misses a renamed tag: %q", d)
	}
}
