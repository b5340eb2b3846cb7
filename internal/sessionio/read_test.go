package sessionio

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// shape writes a transcript compactly: one line per message.
func shape(msgs []protocol.Message) []string {
	var out []string
	for _, m := range msgs {
		line := string(m.Role)
		if m.Reasoning != "" {
			line += "[r]"
		}
		if m.Role == protocol.RoleTool {
			line += "(" + m.ToolName
			if m.IsError {
				line += " error"
			}
			line += ")"
		}
		text := m.Content
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		}
		line += ": " + text
		for _, c := range m.ToolCalls {
			line += " →" + c.Name
		}
		out = append(out, line)
	}
	return out
}

// checkPaired fails unless every tool call is answered, right after the
// answer that made it, in order, and every result answers a call.
func checkPaired(t *testing.T, msgs []protocol.Message) {
	t.Helper()
	seen := map[string]bool{}
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == protocol.RoleTool {
			t.Errorf("message %d: a tool result not right after its call: %+v", i, m)
			continue
		}
		for j, c := range m.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				t.Errorf("message %d: call id %q empty or repeated", i, c.ID)
			}
			seen[c.ID] = true
			if !json.Valid([]byte(c.Arguments)) {
				t.Errorf("message %d: call %s arguments are not JSON: %q", i, c.Name, c.Arguments)
			}
			k := i + 1 + j
			if k >= len(msgs) || msgs[k].Role != protocol.RoleTool || msgs[k].ToolCallID != c.ID {
				t.Errorf("message %d: call %s (%s) is not answered in order", i, c.Name, c.ID)
			}
		}
		i += len(m.ToolCalls)
	}
}

func noteKinds(notes []Note) []string {
	var out []string
	for _, n := range notes {
		if !slices.Contains(out, n.What) {
			out = append(out, n.What)
		}
	}
	slices.Sort(out)
	return out
}

func readOne(t *testing.T, source, path string) *Session {
	t.Helper()
	list, failures, err := Read(source, path)
	if err != nil || len(failures) > 0 {
		t.Fatalf("Read: %v, failures %v", err, failures)
	}
	if len(list) != 1 {
		t.Fatalf("%d sessions", len(list))
	}
	return list[0]
}

func TestReadClaude(t *testing.T) {
	t.Parallel()
	s := readOne(t, SourceClaude, "testdata/claude")
	if s.SourceID != "7b0f6a52-2d4e-4c11-9a7e-0c1d2e3f4a5b" || s.Workspace != "/home/user/proj" ||
		s.Title != "Fix the failing parser test" || s.Model != "claude-sonnet-4-5" || s.CreatedAt.IsZero() {
		t.Errorf("session = %+v", s)
	}
	want := []string{
		"user: The parser test fails, can you fix it?",
		"assistant[r]: Let me run the tests. →Bash",
		"tool(Bash error): --- FAIL: TestParse (0.00s)",
		"assistant:  →Read →Edit",
		"tool(Read):      1\tpackage parser",
		"tool(Edit error): <tool_use_error>File has not been read yet.</tool_use_error>",
		"assistant: Fixed: count returned n - 1. →Bash",
		"tool(Bash error): " + MissingResult,
		"user: Here is a screenshot of the output",
	}
	if got := shape(s.Messages); !slices.Equal(got, want) {
		t.Errorf("messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(s.Messages[len(s.Messages)-1].Content, "[image]") {
		t.Errorf("image not shown: %q", s.Messages[len(s.Messages)-1].Content)
	}
	var args map[string]string
	json.Unmarshal([]byte(s.Messages[1].ToolCalls[0].Arguments), &args)
	if args["command"] != "go test ./parser" {
		t.Errorf("arguments = %q", s.Messages[1].ToolCalls[0].Arguments)
	}
	checkPaired(t, s.Messages)
	wantNotes := []string{"claude file-history-snapshot", "claude line that is not a record", "claude queue-operation",
		"claude subagent user", "claude system"}
	if got := noteKinds(s.Notes); !slices.Equal(got, wantNotes) {
		t.Errorf("notes = %v, want %v", got, wantNotes)
	}
}

func TestReadCodex(t *testing.T) {
	t.Parallel()
	list, failures, err := Read(SourceCodex, "testdata/codex")
	if err != nil || len(failures) > 0 || len(list) != 2 {
		t.Fatalf("Read: %d sessions, %v, %v", len(list), failures, err)
	}
	legacy, s := list[0], list[1]
	if s.SourceID != "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" || s.Workspace != "/home/user/svc" || s.Model != "gpt-5-codex" {
		t.Errorf("session = %+v", s)
	}
	want := []string{
		"user: The build is broken, please fix it.",
		"assistant[r]:  →shell",
		`tool(shell): {"output":"main.go:7:2: undefined: helper\n","metadata":{"exit_code":1,"duration_seconds":0.4}}`,
		"assistant:  →apply_patch",
		"tool(apply_patch): Success. Updated the following files:",
		"assistant:  →shell",
		"tool(shell error): sandbox denied network access",
		"assistant:  →local_shell",
		"tool(local_shell): ok  \tsvc\t0.012s",
		"assistant: Fixed: main.go called helper, which is named help.",
		"user: Thanks! Now add a test.",
		"assistant:  →shell",
		"tool(shell error): " + MissingResult,
	}
	got := shape(s.Messages)
	// The first result's text has a literal \n inside JSON; compare whole.
	got[2] = "tool(shell): " + s.Messages[2].Content
	if !slices.Equal(got, want) {
		t.Errorf("messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var patch map[string]string
	if json.Unmarshal([]byte(s.Messages[3].ToolCalls[0].Arguments), &patch) != nil || !strings.HasPrefix(patch["input"], "*** Begin Patch") {
		t.Errorf("apply_patch arguments = %q", s.Messages[3].ToolCalls[0].Arguments)
	}
	checkPaired(t, s.Messages)
	wantNotes := []string{"codex compacted", "codex developer message", "codex event turn_diff", "codex ghost_snapshot",
		"codex user message", "codex web_search_call", "codex world_state"}
	if got := noteKinds(s.Notes); !slices.Equal(got, wantNotes) {
		t.Errorf("notes = %v, want %v", got, wantNotes)
	}
	if got := shape(legacy.Messages); !slices.Equal(got, []string{"user: Print hello", "assistant:  →shell", "tool(shell): hello", "assistant: Printed hello."}) {
		t.Errorf("legacy messages = %v", got)
	}
	checkPaired(t, legacy.Messages)
	if legacy.SourceID != "legacy-0001" || !slices.Equal(noteKinds(legacy.Notes), []string{"codex session header", "codex state record"}) {
		t.Errorf("legacy = %s, notes %v", legacy.SourceID, noteKinds(legacy.Notes))
	}
}

// opencodeWant is what the opencode fixture maps to, in files or in a
// database.
var opencodeWant = []string{
	"user: Add a dark mode toggle to the settings page",
	"assistant[r]: I'll look at the settings page first. →read →edit",
	"tool(read): <file>",
	"tool(edit error): oldString found multiple times",
	"assistant: The edit failed; I need more context around the braces.",
	"user: Use a checkbox.",
	"assistant:  →write",
	"tool(write error): " + MissingResult,
}

func checkOpencode(t *testing.T, s *Session) {
	t.Helper()
	if s.SourceID != "ses_01JQ" || s.Title != "Add a dark mode toggle" || s.Workspace != "/home/user/web" || s.Model != "claude-sonnet-4-5" {
		t.Errorf("session = %+v", s)
	}
	if got := shape(s.Messages); !slices.Equal(got, opencodeWant) {
		t.Errorf("messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(opencodeWant, "\n"))
	}
	if !strings.Contains(s.Messages[0].Content, "[file settings.tsx]") {
		t.Errorf("file part not shown: %q", s.Messages[0].Content)
	}
	if u := s.Messages[4].Usage; u == nil || u.InputTokens != 900 || u.CachedTokens != 300 {
		t.Errorf("usage = %+v", u)
	}
	checkPaired(t, s.Messages)
	want := []string{"opencode file part", "opencode part patch", "opencode user part hologram"}
	if got := noteKinds(s.Notes); !slices.Equal(got, want) {
		t.Errorf("notes = %v, want %v", got, want)
	}
}

func TestReadOpencodeFiles(t *testing.T) {
	t.Parallel()
	checkOpencode(t, readOne(t, SourceOpencode, "testdata/opencode"))
}

// TestReadOpencodeDatabase builds an opencode.db in the newer layout from
// the same fixture: the session, message and part tables with the records
// in a JSON data column.
func TestReadOpencodeDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL DEFAULT '', directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL)`,
		`CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)`,
		`CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	storage := "testdata/opencode/storage"
	var info opencodeSession
	readJSON(t, filepath.Join(storage, "session/4b1f2c3d/ses_01JQ.json"), &info)
	db.ExecContext(ctx, `INSERT INTO session VALUES (?, '4b1f2c3d', NULL, 'dark-mode', ?, ?, '1.0.0', ?, ?)`,
		info.ID, info.Directory, info.Title, info.Time.Created, info.Time.Updated)
	msgs, _ := filepath.Glob(filepath.Join(storage, "message/ses_01JQ/*.json"))
	for _, mf := range msgs {
		var m map[string]any
		readJSON(t, mf, &m)
		id := m["id"].(string)
		created := m["time"].(map[string]any)["created"].(float64)
		delete(m, "id")
		delete(m, "sessionID")
		data, _ := json.Marshal(m)
		db.ExecContext(ctx, `INSERT INTO message VALUES (?, 'ses_01JQ', ?, ?, ?)`, id, int64(created), int64(created), string(data))
		parts, _ := filepath.Glob(filepath.Join(storage, "part", id, "*.json"))
		for _, pf := range parts {
			var p map[string]any
			readJSON(t, pf, &p)
			pid := p["id"].(string)
			for _, k := range []string{"id", "sessionID", "messageID"} {
				delete(p, k)
			}
			data, _ := json.Marshal(p)
			db.ExecContext(ctx, `INSERT INTO part VALUES (?, ?, 'ses_01JQ', 0, 0, ?)`, pid, id, string(data))
		}
	}
	db.Close()
	checkOpencode(t, readOne(t, SourceOpencode, dir))
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestReadGemini(t *testing.T) {
	t.Parallel()
	list, failures, err := Read(SourceGemini, "testdata/gemini")
	if err != nil || len(failures) > 0 || len(list) != 3 {
		t.Fatalf("Read: %d sessions, %v, %v", len(list), failures, err)
	}
	byID := map[string]*Session{}
	for _, s := range list {
		byID[s.SourceID] = s
		checkPaired(t, s.Messages)
	}
	s := byID["5d6e7f80-1111-2222-3333-444455556666"]
	if s == nil {
		t.Fatalf("sessions: %v", byID)
	}
	want := []string{
		"user: What files are in this folder?",
		"assistant[r]: There are two Go files. →list_directory",
		"tool(list_directory): a.go",
		"user: Actually, read b.go instead",
		"assistant:  →read_file",
		"tool(read_file error): File not found: b.go",
		"assistant: b.go does not exist any more.",
	}
	if got := shape(s.Messages); !slices.Equal(got, want) {
		t.Errorf("messages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Title != "List and read Go files" || s.Model != "gemini-2.5-pro" {
		t.Errorf("session = %+v", s)
	}
	wantNotes := []string{"gemini info message", "gemini message taken back by a rewind", "gemini record"}
	if got := noteKinds(s.Notes); !slices.Equal(got, wantNotes) {
		t.Errorf("notes = %v, want %v", got, wantNotes)
	}
	legacy := byID["aaaabbbb-0000-1111-2222-333344445555"]
	if legacy == nil || !slices.Equal(shape(legacy.Messages), []string{"user: Say hi", "assistant: Hi!"}) ||
		!slices.Equal(noteKinds(legacy.Notes), []string{"gemini error message"}) {
		t.Errorf("legacy = %+v", legacy)
	}
	var saved *Session
	for id, s := range byID {
		if strings.HasPrefix(id, "saved:") {
			saved = s
		}
	}
	want = []string{
		"user: This is the Gemini CLI. We are setting up the context for our chat.",
		"assistant: Got it. Thanks for the context!",
		"user: Read main.go",
		"assistant[r]:  →read_file",
		"tool(read_file): package main",
		"assistant: main.go holds only the package clause.",
	}
	if saved == nil || !slices.Equal(shape(saved.Messages), want) || saved.Title != "before-refactor" {
		t.Errorf("saved chat = %v", saved)
	}
}

func TestReadBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty.jsonl":     "",
		"garbage.jsonl":   "\x00\x01 not json\n{\"type\":",
		"array.jsonl":     "[1,2,3]\n",
		"rollout-x.jsonl": "{\"type\":\"response_item\",\"payload\":\"nope\"}\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	for _, src := range []string{SourceClaude, SourceCodex} {
		list, failures, err := Read(src, dir)
		if err != nil || len(failures) > 0 {
			t.Errorf("%s: %v, %v", src, failures, err)
		}
		for _, s := range list {
			if len(s.Messages) != 0 {
				t.Errorf("%s: messages from garbage: %v", src, shape(s.Messages))
			}
		}
	}
	if _, _, err := Read("cursor", dir); err == nil {
		t.Error("an unknown source was read")
	}
	if _, _, err := Read(SourceClaude, filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing path was read")
	}
}
