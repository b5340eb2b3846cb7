package compact

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	constraint = "never touch vendor/"
	root       = "/ws"
)

func hashOf64(s string) string {
	return strings.Repeat(s, 64/len(s))[:64]
}

// earlyWork is the start of a session: a task with a constraint, files
// read, edited and patched, commands with every kind of ending, a todo
// list written twice and a failed turn.
func earlyWork() (*session, []protocol.Event, []protocol.FileVersion) {
	var s session
	s.system("You are mx-claw.")
	s.user("Fix the flaky test in internal/store. Constraints: " + constraint + ", and keep the public API unchanged.")
	s.call("read_file", `{"path":"internal/store/store.go"}`, "package store\n", false)
	s.call("edit_file", `{"path":"internal/store/store.go","old_string":"a","new_string":"b"}`, "Edited internal/store/store.go", false)
	s.call("edit_file", `{"path":"internal/store/missing.go","old_string":"a","new_string":"b"}`, "Tool failed: file not found: internal/store/missing.go", true)
	s.call("run_command", `{"command":"go test ./internal/store/"}`, "ok  \tstore\t0.2s\n[exit code 0, 1.2s]", false)
	s.call("run_command", `{"command":"go vet ./..."}`, "vet: bad\n[exit code 1, 0.4s]", true)
	s.call("run_command", `{"command":"sleep 999"}`, "[command timed out after 2m0s and was killed]", true)
	s.call("run_command", `{"command":"rm -rf /"}`, "Tool failed: permission denied: catastrophic command", true)
	s.call("todo_write", `{"todos":[{"content":"reproduce","status":"pending"}]}`, "ok", false)
	s.call("apply_patch", `{"patch":"*** Begin Patch\n*** Add File: internal/store/flaky_test.go\n+package store\n*** Update File: internal/store/lease.go\n@@\n-a\n+b\n*** Delete File: internal/store/old.go\n*** Update File: internal/store/a.go\n*** Move to: internal/store/b.go\n@@\n-x\n+y\n*** End Patch"}`, "A internal/store/flaky_test.go\n", false)
	s.call("todo_write", `{"todos":[{"content":"reproduce","status":"completed"},{"content":"fix the race","status":"in_progress"},{"content":"document","status":"pending"}]}`, "ok", false)
	s.call("read_file", "/ws/go.mod", "", false) // arguments that are not JSON
	s.call("read_file", `{"path":"/ws/go.mod"}`, "module x\n", false)
	s.say("The race is in the lease renewal.")
	// An interrupted command: the call has no result.
	s.add(protocol.Message{Role: protocol.RoleAssistant, ToolCalls: []protocol.ToolCall{{ID: "lost", Name: "run_command", Arguments: `{"command":"go test -race ./..."}`}}})
	events := []protocol.Event{
		{Type: protocol.EventTurnStarted, TurnID: "t1"},
		{Type: protocol.EventTurnFailed, TurnID: "t1", Error: "provider: 502 bad gateway"},
	}
	files := []protocol.FileVersion{
		{Path: "/ws/internal/store/store.go", SHA256: hashOf64("0123")},
		{Path: "/ws/internal/store/store.go", SHA256: hashOf64("abcd")}, // later wins
		{Path: "/ws/internal/store/lease.go", SHA256: hashOf64("5")},
		{Path: "/ws/internal/store/flaky_test.go", SHA256: hashOf64("6")},
		{Path: "/ws/go.mod", SHA256: hashOf64("7")},
	}
	return &s, events, files
}

func TestLedgerGolden(t *testing.T) {
	t.Parallel()
	s, events, files := earlyWork()
	got := Ledger(s.msgs, events, LedgerOptions{Root: root, Files: files})
	golden(t, "ledger.golden", got)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}

func TestLedgerContents(t *testing.T) {
	t.Parallel()
	s, events, files := earlyWork()
	got := Ledger(s.msgs, events, LedgerOptions{Root: root, Files: files})
	for _, want := range []string{
		constraint,
		"- internal/store/store.go — edited, read · sha256 abcdabcdabcdabcd",
		"- internal/store/flaky_test.go — created · sha256 6666666666666666",
		"- internal/store/lease.go — patched · sha256 5555555555555555",
		"- internal/store/old.go — deleted\n",
		"- internal/store/a.go — patched, moved to internal/store/b.go\n",
		"- internal/store/b.go — moved from internal/store/a.go\n",
		"- go.mod — read · sha256 7777777777777777",
		"exit 0 (1.2s) · go test ./internal/store/",
		"exit 1 (0.4s) · go vet ./...",
		"command timed out after 2m0s and was killed · sleep 999",
		"failed: permission denied: catastrophic command · rm -rf /",
		"no result recorded (interrupted) · go test -race ./...",
		"- [x] reproduce\n- [~] fix the race (in progress)\n- [ ] document\n",
		"The latest failed tool call, run_command (seq",
		"Tool failed: permission denied: catastrophic command",
		"The latest failed turn (t1): provider: 502 bad gateway",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ledger lacks %q", want)
		}
	}
	for _, unwanted := range []string{"missing.go", `"status":"pending"}]}`} {
		if strings.Contains(got, unwanted) {
			t.Errorf("ledger has %q", unwanted)
		}
	}
}

func TestLedgerEmpty(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	if got := Ledger(s.msgs, nil, LedgerOptions{}); got != "" {
		t.Errorf("ledger of an empty session = %q", got)
	}
}

func TestLedgerDeterministic(t *testing.T) {
	t.Parallel()
	s, events, files := earlyWork()
	for i := range 200 {
		s.call("read_file", fmt.Sprintf(`{"path":"f%03d.go"}`, i), "x", false)
		s.call("edit_file", fmt.Sprintf(`{"path":"g%03d.go"}`, i%7), "ok", false)
	}
	want := Ledger(s.msgs, events, LedgerOptions{Root: root, Files: files, MaxFiles: 30})
	r := rand.New(rand.NewPCG(1, 1))
	for range 20 {
		// Files for distinct paths in any order give the same ledger.
		shuffled := append([]protocol.FileVersion(nil), files[2:]...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		shuffled = append(files[:2:2], shuffled...)
		if got := Ledger(s.msgs, events, LedgerOptions{Root: root, Files: shuffled, MaxFiles: 30}); got != want {
			t.Fatalf("ledger changed between runs:\n%s\n----\n%s", got, want)
		}
	}
	if !strings.Contains(want, " more files\n") {
		t.Errorf("ledger does not say how many files it left out:\n%s", want)
	}
}

func TestLedgerBounded(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	s.user("first: " + constraint + " " + strings.Repeat("y", 5000))
	for i := range 300 {
		s.user(fmt.Sprintf("message %d %s", i, strings.Repeat("z", 1000)))
		s.call("run_command", fmt.Sprintf(`{"command":"make target-%d %s"}`, i, strings.Repeat("q", 500)), "[exit code 0, 0.1s]", false)
		s.call("write_file", fmt.Sprintf(`{"path":"dir/file-%d.go","content":"x"}`, i), "ok", false)
		s.call("run_command", `{"command":"false"}`, strings.Repeat("e", 5000)+"\n[exit code 1, 0.1s]", true)
	}
	s.call("todo_write", `{"todos":[`+strings.Repeat(`{"content":"a long item `+strings.Repeat("w", 200)+`","status":"pending"},`, 100)+`{"content":"last","status":"pending"}]}`, "ok", false)
	for _, max := range []int{500, 1000, 4000, 10000} {
		got := Ledger(s.msgs, nil, LedgerOptions{MaxTokens: max})
		if len(got) > max*bytesPerToken {
			t.Errorf("MaxTokens %d: ledger is %d bytes", max, len(got))
		}
		for _, want := range []string{"seq 2, the first message", "the latest message", "### Files", "### Commands run", "### Todo list", "### Last error"} {
			if !strings.Contains(got, want) {
				t.Errorf("MaxTokens %d: ledger lacks %q", max, want)
			}
		}
		if max >= 1000 && !strings.Contains(got, "first: "+constraint) {
			t.Errorf("MaxTokens %d: the first message lost its start", max)
		}
	}
}

func TestLedgerUserMessages(t *testing.T) {
	t.Parallel()
	var s session
	s.system("sys")
	s.user("Build the parser. " + constraint + ".")
	for i := range 40 {
		s.user(fmt.Sprintf("step %02d: %s", i, strings.Repeat("word ", 80)))
	}
	newest := "Now the last thing: " + strings.Repeat("long instruction ", 150)
	s.user(newest)
	got := Ledger(s.msgs, nil, LedgerOptions{UserTokens: 2000})
	if !strings.Contains(got, "Build the parser. "+constraint+".") {
		t.Error("the first message is not kept whole")
	}
	if !strings.Contains(got, newest) {
		t.Error("the newest message is not kept whole")
	}
	if !strings.Contains(got, "step 39: "+strings.Repeat("word ", 80)) {
		t.Error("the most recent older message is not kept whole")
	}
	if !strings.Contains(got, "(33 earlier messages not shown here: seq 3, 4, 5,") {
		t.Errorf("the messages left out are not counted:\n%s", got)
	}
	// The oldest messages go first: step 00 is not shown, step 38 is.
	if strings.Contains(got, "step 00:") || !strings.Contains(got, "step 38:") {
		t.Errorf("the wrong messages were left out:\n%s", got)
	}
}

func TestLedgerVerbatimWithFences(t *testing.T) {
	t.Parallel()
	var s session
	s.user("Use this:\n```go\nfunc f() {}\n```\n" + constraint)
	got := Ledger(s.msgs, nil, LedgerOptions{})
	if !strings.Contains(got, "````\nUse this:\n```go\nfunc f() {}\n```\n"+constraint+"\n````\n") {
		t.Errorf("a message with a code fence is not shown verbatim:\n%s", got)
	}
}

func TestLedgerShortensOlderMessages(t *testing.T) {
	t.Parallel()
	var s session
	s.user("first")
	s.user("older " + strings.Repeat("a", 500) + strings.Repeat("b", 500))
	s.user("middle " + strings.Repeat("c", 200))
	s.user("newest")
	got := Ledger(s.msgs, nil, LedgerOptions{UserTokens: 200})
	for _, want := range []string{"```\nfirst\n```", "```\nnewest\n```", "middle " + strings.Repeat("c", 200),
		"seq 2 (shortened to ", "of 1006 bytes):\n```\nolder aaa", "bytes not shown …]\nbbb"} {
		if !strings.Contains(got, want) {
			t.Errorf("ledger lacks %q:\n%s", want, got)
		}
	}
}

// TestLedgerSurvivesCompactions is the ledger test of issue 7: a
// constraint from the first user message and the files edited early are
// in the view, verbatim, after the third compaction.
func TestLedgerSurvivesCompactions(t *testing.T) {
	t.Parallel()
	s, events, files := earlyWork()
	est := Approx
	const window = 6000
	var records []Record
	for step := 0; len(records) < 3 && step < 500; step++ {
		if step%15 == 0 {
			s.user(fmt.Sprintf("Continue with part %d.", step/15))
		}
		s.call("grep", fmt.Sprintf(`{"pattern":"p%d"}`, step), strings.Repeat("match line\n", 60), false)
		opts := Options{Window: window}
		if prev := latest(records); prev != nil {
			opts.Previous = prev
			sm := SummaryMessage(prev, prev.Ledger)
			opts.PinnedTokens = est(&sm)
		}
		cut, ok := Plan(s.msgs, est, opts)
		if !ok {
			continue
		}
		req := SummaryRequest(latest(records), cut.Messages, "", window, est)
		summary := fmt.Sprintf("Summary %d (the model's words; it may forget things).", len(records)+1)
		if len(req) != 2 {
			t.Fatalf("summary request has %d messages", len(req))
		}
		ledger := Ledger(s.msgs[:cut.At], events, LedgerOptions{Root: root, Files: files})
		records = append(records, Record{ID: fmt.Sprint(len(records)), UpToSeq: cut.UpToSeq, Summary: summary, Ledger: ledger, Trigger: TriggerAuto})
	}
	if len(records) < 3 {
		t.Fatalf("%d compactions, want 3", len(records))
	}
	rec := latest(records)
	if rec.UpToSeq <= 30 {
		t.Fatalf("the third compaction covers only up to seq %d, which is not past the early work", rec.UpToSeq)
	}
	view := Project(s.msgs, records, rec.Ledger)
	if err := CheckPairing(view); err != nil {
		t.Fatal(err)
	}
	var visible strings.Builder
	for _, m := range view {
		visible.WriteString(m.Content)
	}
	for _, want := range []string{
		"Fix the flaky test in internal/store. Constraints: " + constraint + ", and keep the public API unchanged.",
		"- internal/store/store.go — edited, read · sha256 abcdabcdabcdabcd",
		"Summary 3",
	} {
		if !strings.Contains(visible.String(), want) {
			t.Errorf("the view after three compactions lacks %q", want)
		}
	}
	for i := range view {
		if view[i].Seq > 0 && view[i].Seq <= rec.UpToSeq && view[i].Role != protocol.RoleSystem {
			t.Errorf("message seq %d is still in the view", view[i].Seq)
		}
	}
}
