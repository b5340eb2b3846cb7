package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/hooks"
	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
	"github.com/mx-claw/mx-claw/internal/subagent"
	"github.com/mx-claw/mx-claw/internal/worktree"
)

// subRecorder collects events from any goroutine and lets a test wait for
// one; it never blocks the turn.
type subRecorder struct {
	mu   sync.Mutex
	evs  []protocol.Event
	cond *sync.Cond
}

func newSubRecorder() *subRecorder {
	r := &subRecorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *subRecorder) sink(e protocol.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
	r.cond.Broadcast()
}

func (r *subRecorder) all() []protocol.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// waitN waits until n events satisfy ok.
func (r *subRecorder) waitN(t *testing.T, n int, ok func(protocol.Event) bool) []protocol.Event {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	go func() { time.Sleep(20 * time.Second); r.cond.Broadcast() }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var got []protocol.Event
		for _, e := range r.evs {
			if ok(e) {
				got = append(got, e)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d events, got %d", n, len(got))
		}
		r.cond.Wait()
	}
}

// isChild reports whether a request comes from a subagent.
func isChild(req *llmtest.Request) bool {
	m := req.Chat.Messages
	return len(m) > 0 && strings.Contains(m[0].Content, "# Subagent")
}

// lastUser returns the content of a request's last user message.
func lastUser(req *llmtest.Request) string {
	m := req.Chat.Messages
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Role == "user" {
			return m[i].Content
		}
	}
	return ""
}

// hasToolResult reports whether a request carries tool results.
func hasToolResult(req *llmtest.Request) bool {
	return slices.ContainsFunc(req.Chat.Messages, func(m llmtest.ChatMessage) bool { return m.Role == "tool" })
}

func taskCall(typ, prompt string, worktree bool) llmtest.ToolCall {
	args, _ := json.Marshal(map[string]any{"description": "look into " + prompt, "prompt": prompt, "subagent_type": typ, "worktree": worktree})
	return llmtest.ToolCall{Name: TaskToolName, Arguments: string(args)}
}

func withSubagents(opts Options) Options {
	opts.Subagents = func(context.Context, *protocol.Session) ([]subagent.Definition, []string) {
		return subagent.BuiltIn(), nil
	}
	return opts
}

// overlap returns the largest number of child turns running at once,
// from their turn.started and end events.
func overlap(evs []protocol.Event) int {
	cur, best := 0, 0
	for _, e := range evs {
		if e.ParentSessionID == "" {
			continue
		}
		switch {
		case e.Type == protocol.EventTurnStarted:
			cur++
			best = max(best, cur)
		case e.Type.Terminal():
			cur--
		}
	}
	return best
}

func TestExploreSubagentsRunInParallelBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		children int
		limit    int
	}{
		{"three at once", 3, 0}, // the default bound is 4
		{"bounded", 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, withSubagents(Options{SubagentLimits: SubagentLimits{MaxParallel: tc.limit}}))
			var calls []llmtest.ToolCall
			for i := range tc.children {
				calls = append(calls, taskCall(subagent.Explore, fmt.Sprintf("question %d", i), false))
			}
			var childTools []string
			var mu sync.Mutex
			f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
				switch {
				case isChild(req):
					mu.Lock()
					childTools = req.Chat.Tools
					mu.Unlock()
					// Slow enough that siblings overlap.
					return llmtest.Reply{Text: "answer to " + lastUser(req), Pieces: 4, ChunkDelay: 60 * time.Millisecond}
				case hasToolResult(req):
					return llmtest.Text("all answered")
				}
				return llmtest.Reply{ToolCalls: calls}
			})
			s := f.session()
			rec := newSubRecorder()
			if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "research"}, rec.sink); err != nil {
				t.Fatal(err)
			}
			evs := rec.all()
			want := tc.children
			if tc.limit > 0 {
				want = tc.limit
			}
			if got := overlap(evs); got != want {
				t.Errorf("%d children ran at once at most, want %d", got, want)
			}
			ctx := context.Background()
			msgs, _ := f.st.Messages(ctx, s.ID, 0)
			var results []string
			for _, m := range msgs {
				if m.Role == protocol.RoleTool {
					results = append(results, m.Content)
				}
			}
			if len(results) != tc.children {
				t.Fatalf("tool results %q", results)
			}
			// Results are stored as the subagents finish.
			for i := range tc.children {
				if !slices.ContainsFunc(results, func(r string) bool {
					return strings.HasPrefix(r, fmt.Sprintf("answer to question %d\n", i)) && strings.Contains(r, "[explore subagent, session ")
				}) {
					t.Errorf("no result for question %d in %q", i, results)
				}
			}
			kids, err := f.st.ListSessions(ctx, store.ListOptions{Parent: s.ID})
			if err != nil || len(kids) != tc.children {
				t.Fatalf("children %v, %v", kids, err)
			}
			for _, k := range kids {
				if k.Agent != subagent.Explore || k.Status != protocol.StatusIdle || k.Workspace != f.ws {
					t.Errorf("child %+v", k)
				}
				stored, _ := f.st.Events(ctx, k.ID, 0, 0)
				for _, e := range stored {
					if e.ParentSessionID != s.ID || e.ParentToolCallID == "" {
						t.Fatalf("stored child event without its parent: %+v", e)
					}
				}
			}
			// The user's own listing shows the parent only.
			if top, _ := f.st.ListSessions(ctx, store.ListOptions{}); len(top) != 1 {
				t.Errorf("top-level sessions %v", top)
			}
			// Explore gets read-only tools, and no task tool.
			for _, name := range []string{"write_file", "edit_file", "apply_patch", "run_command", TaskToolName} {
				if slices.Contains(childTools, name) {
					t.Errorf("an explore subagent was offered %s: %v", name, childTools)
				}
			}
			if !slices.Contains(childTools, "read_file") || !slices.Contains(childTools, "grep") {
				t.Errorf("explore tools %v", childTools)
			}
			// Every child event reached the parent's sink after its task's
			// tool.started.
			started := map[string]bool{}
			for _, e := range evs {
				if e.Type == protocol.EventToolStarted && e.ParentSessionID == "" {
					started[e.ToolCallID] = true
				}
				if e.ParentSessionID != "" && !started[e.ParentToolCallID] {
					t.Fatalf("child event %s before its task's tool.started", e.Type)
				}
			}
		})
	}
}

func TestSubagentHitsItsBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withSubagents(Options{SubagentLimits: SubagentLimits{MaxIterations: 2}}))
	var n int
	var mu sync.Mutex
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req):
			mu.Lock()
			n++
			k := n
			mu.Unlock()
			// Never done: a new search every step.
			return llmtest.Call("glob", fmt.Sprintf(`{"pattern":"*.x%d"}`, k))
		case hasToolResult(req):
			return llmtest.Text("the subagent gave up")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.Explore, "endless", false)}}
	})
	s := f.session()
	ctx := context.Background()
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "go"}, nil); err != nil {
		t.Fatalf("the parent's turn must go on: %v", err)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	var res *protocol.Message
	for i := range msgs {
		if msgs[i].Role == protocol.RoleTool {
			res = &msgs[i]
		}
	}
	if res == nil || !res.IsError || !strings.Contains(res.Content, "Maximum agent iterations reached (2)") {
		t.Fatalf("task result %+v", res)
	}
	kids, _ := f.st.ListSessions(ctx, store.ListOptions{Parent: s.ID})
	if len(kids) != 1 || kids[0].Status != protocol.StatusFailed {
		t.Fatalf("child %+v", kids)
	}
	if st := f.status(s.ID); st != protocol.StatusIdle {
		t.Errorf("parent %s", st)
	}

	// A time budget stops a subagent that hangs.
	f2 := newFixture(t, withSubagents(Options{SubagentLimits: SubagentLimits{MaxDuration: 300 * time.Millisecond}}))
	f2.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req):
			return llmtest.Reply{Text: "thinking", Hang: true}
		case hasToolResult(req):
			return llmtest.Text("ok")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.General, "slow", false)}}
	})
	s2 := f2.session()
	if err := f2.core.Run(ctx, TurnRequest{SessionID: s2.ID, Input: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ = f2.st.Messages(ctx, s2.ID, 0)
	if r := msgs[len(msgs)-2]; r.Role != protocol.RoleTool || !strings.Contains(r.Content, "Budget spent: time") {
		t.Errorf("task result %+v", r)
	}
	kids, _ = f2.st.ListSessions(ctx, store.ListOptions{Parent: s2.ID})
	if len(kids) != 1 || kids[0].Status != protocol.StatusFailed || !strings.Contains(kids[0].LastError, "time") {
		t.Errorf("child %+v", kids)
	}
}

func TestCancellingTheParentCancelsItsSubagents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withSubagents(Options{}))
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if isChild(req) {
			return llmtest.Reply{Text: "working", Hang: true}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			taskCall(subagent.Explore, "a", false), taskCall(subagent.Explore, "b", false)}}
	})
	s := f.session()
	rec := newSubRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "go"}, rec.sink) }()
	// Both subagents are streaming.
	rec.waitN(t, 2, func(e protocol.Event) bool {
		return e.ParentSessionID != "" && e.Type == protocol.EventMessageDelta
	})
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	bg := context.Background()
	running, _ := f.st.ListSessions(bg, store.ListOptions{Status: protocol.StatusRunning, WithChildren: true})
	if len(running) != 0 {
		t.Errorf("sessions left running: %+v", running)
	}
	kids, _ := f.st.ListSessions(bg, store.ListOptions{Parent: s.ID})
	if len(kids) != 2 {
		t.Fatalf("children %+v", kids)
	}
	for _, k := range kids {
		if k.Status != protocol.StatusCancelled {
			t.Errorf("child %s is %s, want cancelled", k.ID, k.Status)
		}
		if _, err := f.st.GetLease(bg, k.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("child %s still holds a lease: %v", k.ID, err)
		}
	}
	if st := f.status(s.ID); st != protocol.StatusCancelled {
		t.Errorf("parent %s", st)
	}
}

func TestSubagentApprovalsGoToTheParentsUser(t *testing.T) {
	t.Parallel()
	opts := withSubagents(Options{Permissions: askPolicy(t)})
	f := newFixture(t, opts)
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req) && hasToolResult(req):
			return llmtest.Text("wrote it")
		case isChild(req):
			return llmtest.Call("write_file", `{"path":"out.txt","content":"hi\n"}`)
		case hasToolResult(req):
			return llmtest.Text("done")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.General, "write out.txt", false)}}
	})
	s := f.session()
	rec := newSubRecorder()
	errc := make(chan error, 1)
	go func() {
		errc <- f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go", OnAsk: AskWait}, rec.sink)
	}()
	req := rec.waitN(t, 1, func(e protocol.Event) bool { return e.Type == protocol.EventPermissionRequested })[0]
	if req.ParentSessionID != s.ID || req.SessionID == s.ID || req.ToolName != "write_file" {
		t.Fatalf("approval request %+v", req)
	}
	if err := f.core.Answer(context.Background(), ResolveRequest{SessionID: req.SessionID, RequestID: req.RequestID, Approve: true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
	// In plan mode the subagent inherits the refusal: its parent's mode.
	f2 := newFixture(t, withSubagents(Options{Permissions: planPolicy}))
	f2.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req) && hasToolResult(req):
			return llmtest.Text("could not")
		case isChild(req):
			return llmtest.Call("write_file", `{"path":"out.txt","content":"hi\n"}`)
		case hasToolResult(req):
			return llmtest.Text("done")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.General, "write", false)}}
	})
	s2 := f2.session()
	if err := f2.core.Run(context.Background(), TurnRequest{SessionID: s2.ID, Input: "go", OnAsk: AskWait}, nil); err != nil {
		t.Fatal(err)
	}
	kids, _ := f2.st.ListSessions(context.Background(), store.ListOptions{Parent: s2.ID})
	msgs, _ := f2.st.Messages(context.Background(), kids[0].ID, 0)
	if r := msgs[len(msgs)-2]; r.Role != protocol.RoleTool || !strings.Contains(r.Content, "plan mode") {
		t.Errorf("the subagent's write in plan mode: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(f2.ws, "out.txt")); err == nil {
		t.Error("a plan-mode subagent wrote a file")
	}
}

func TestGeneralSubagentInAWorktree(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	opts := withSubagents(Options{Worktrees: t.TempDir()})
	f := newFixture(t, opts, worktree.MergeTool{})
	gitIn := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", f.ws}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gitIn("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(f.ws, "main.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("add", "-A")
	gitIn("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")

	var childWS string
	var mu sync.Mutex
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req) && hasToolResult(req):
			return llmtest.Text("added feature.txt")
		case isChild(req):
			mu.Lock()
			childWS = req.Chat.Messages[0].Content
			mu.Unlock()
			return llmtest.Call("write_file", `{"path":"feature.txt","content":"feature\n"}`)
		case hasToolResult(req):
			return llmtest.Text("done")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.General, "add feature.txt", true)}}
	})
	s := f.session()
	ctx := context.Background()
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.st.Messages(ctx, s.ID, 0)
	res := msgs[len(msgs)-2]
	if res.Role != protocol.RoleTool || res.IsError || !strings.Contains(res.Content, "Its changes are on branch mx-claw/general-") ||
		!strings.Contains(res.Content, "feature.txt") {
		t.Fatalf("task result %+v", res)
	}
	if !strings.Contains(childWS, "separate git worktree") {
		t.Errorf("the subagent was not told about its worktree:\n%s", childWS)
	}
	// The user's tree is untouched; the branch holds the edit.
	if _, err := os.Stat(filepath.Join(f.ws, "feature.txt")); err == nil {
		t.Error("the subagent wrote into the user's tree")
	}
	if st := gitIn("status", "--porcelain"); st != "" {
		t.Errorf("the user's tree changed: %q", st)
	}
	branch := strings.TrimSpace(gitIn("branch", "--list", "mx-claw/*", "--format=%(refname:short)"))
	if got := gitIn("show", branch+":feature.txt"); got != "feature\n" {
		t.Errorf("branch %s holds %q", branch, got)
	}
	kids, _ := f.st.ListSessions(ctx, store.ListOptions{Parent: s.ID})
	if len(kids) != 1 || !strings.HasPrefix(kids[0].Workspace, opts.Worktrees) {
		t.Errorf("child %+v", kids)
	}
	if _, err := os.Stat(kids[0].Workspace); err == nil {
		t.Error("the worktree folder is left behind")
	}

	// Merging back is a call of its own; a conflict with the user's
	// uncommitted change refuses and leaves the tree as it was.
	if err := os.WriteFile(filepath.Join(f.ws, "feature.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		if last := req.Chat.Messages[len(req.Chat.Messages)-1]; last.Role == "tool" && strings.Contains(last.Content, "erge") {
			return llmtest.Text("reported")
		}
		return llmtest.Call(worktree.MergeToolName, fmt.Sprintf(`{"branch":%q}`, branch))
	})
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "merge it"}, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ = f.st.Messages(ctx, s.ID, 0)
	if r := msgs[len(msgs)-2]; !r.IsError || !strings.Contains(r.Content, "Not merged") || !strings.Contains(r.Content, "feature.txt") {
		t.Errorf("merge result %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "feature.txt")); string(b) != "mine\n" {
		t.Errorf("the user's file is now %q", b)
	}
	// Without the conflict it merges.
	os.Remove(filepath.Join(f.ws, "feature.txt"))
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "merge it again"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "feature.txt")); string(b) != "feature\n" {
		t.Errorf("after the merge feature.txt is %q", b)
	}
}

func planPolicy(ctx context.Context, sess *protocol.Session) (*permission.Policy, error) {
	return permission.NewPolicy(permission.Options{Mode: permission.ModePlan})
}

func TestSubagentHooksFire(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	cfg, err := hooks.ParseConfig(json.RawMessage(`{
	  "SubagentStart": [{"matcher": "explore", "hooks": [{"type": "command",
	    "command": "jq -c . >> `+log+`; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SubagentStart\",\"additionalContext\":\"HOOK-CONTEXT\"}}'"}]}],
	  "SubagentStop": [{"hooks": [{"type": "command",
	    "command": "in=$(cat); echo \"$in\" >> `+log+`; case \"$in\" in *'\"stop_hook_active\":true'*) exit 0;; esac; echo 'check again' >&2; exit 2"}]}]
	}`), "settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed")
	}
	opts := withSubagents(Options{Hooks: func(context.Context, *protocol.Session) (*hooks.Runner, error) {
		return &hooks.Runner{Config: cfg, DataDir: dir}, nil
	}})
	f := newFixture(t, opts)
	var prompt string
	var mu sync.Mutex
	f.srv.SetResponder(func(req *llmtest.Request) llmtest.Reply {
		switch {
		case isChild(req):
			mu.Lock()
			prompt = req.Chat.Messages[0].Content
			mu.Unlock()
			return llmtest.Text("found it")
		case hasToolResult(req):
			return llmtest.Text("done")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{taskCall(subagent.Explore, "find", false)}}
	})
	s := f.session()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, "HOOK-CONTEXT") {
		t.Errorf("SubagentStart's context is not in the subagent's prompt:\n%s", prompt)
	}
	data, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("hook inputs:\n%s", data)
	}
	kids, _ := f.st.ListSessions(context.Background(), store.ListOptions{Parent: s.ID})
	for i, want := range []string{`"hook_event_name":"SubagentStart"`, `"stop_hook_active":false`, `"stop_hook_active":true`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"agent_id":"`+kids[0].ID+`"`) ||
			!strings.Contains(lines[i], `"agent_type":"explore"`) || !strings.Contains(lines[i], `"session_id":"`+s.ID+`"`) {
			t.Errorf("hook input %d lacks %s or the agent fields: %s", i, want, lines[i])
		}
	}
	if !strings.Contains(lines[1], `"agent_transcript_path":"`) {
		t.Errorf("SubagentStop input: %s", lines[1])
	}
	// The block kept the subagent going once.
	msgs, _ := f.st.Messages(context.Background(), kids[0].ID, 0)
	if !slices.ContainsFunc(msgs, func(m protocol.Message) bool { return strings.Contains(m.Content, "check again") }) {
		t.Error("SubagentStop's block did not reach the subagent")
	}
}
