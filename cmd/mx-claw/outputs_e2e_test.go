package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
)

// TestKeptOutputsGoWithTheirSessionAndWithAge: the whole output of a
// command whose result was cut is kept under $MX_CLAW_HOME/outputs/ for
// read_tool_output; `sessions rm` removes it with the session, and a start
// prunes files older than 30 days and the outputs of sessions that are gone.
func TestKeptOutputsGoWithTheirSessionAndWithAge(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "long", Name: "run_command", Arguments: `{"command":"seq 1 200000"}`}}},
		llmtest.Text("counted"),
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "long2", Name: "run_command", Arguments: `{"command":"seq 1 200000"}`}}},
		llmtest.Text("counted again"),
		llmtest.Text("hello"),
	)
	outputs := filepath.Join(e.home, "outputs")
	kept := func(id string) []string {
		files, _ := filepath.Glob(filepath.Join(outputs, id, "*"))
		return files
	}
	first := sessionOf(t, e.run("", "run", "--json", "--yolo", "count").events(t))
	second := sessionOf(t, e.run("", "run", "--json", "--yolo", "count again").events(t))
	if len(kept(first)) != 1 || len(kept(second)) != 1 {
		t.Fatalf("kept outputs %v and %v, want one file each", kept(first), kept(second))
	}

	// Removed with its session.
	r := e.run("", "sessions", "rm", first)
	if r.code != 0 || !strings.Contains(r.stdout, "Deleted "+first) {
		t.Fatalf("sessions rm: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(outputs, first)); !os.IsNotExist(err) {
		t.Errorf("the outputs of the removed session are still there (%v)", err)
	}
	if r := e.run("", "sessions", "show", first); r.code == 0 {
		t.Errorf("sessions show of a removed session: exit 0\n%s", r.stdout)
	}
	if r := e.run("", "sessions", "rm", "nosuch"); r.code == 0 || !strings.Contains(r.stderr, "nosuch does not exist") {
		t.Errorf("sessions rm nosuch: exit %d %q", r.code, r.stderr)
	}

	// Pruned by age at start; a session that is gone leaves nothing.
	old := time.Now().Add(-31 * 24 * time.Hour)
	if err := os.Chtimes(kept(second)[0], old, old); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(outputs, "gone-session", "call.out")
	if err := os.MkdirAll(filepath.Dir(orphan), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphan, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if files := kept(second); len(files) != 0 {
		t.Errorf("a 31-day-old output is still kept: %v", files)
	}
	if _, err := os.Stat(filepath.Dir(orphan)); !os.IsNotExist(err) {
		t.Errorf("the outputs of a session that is gone are still there (%v)", err)
	}
}
