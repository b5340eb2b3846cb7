package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/permission"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
)

// goldenContext is a session context with both sections.
func goldenContext() *SessionContext {
	return &SessionContext{
		Memory: []MemoryNote{{Label: "USER.md", Text: "- I use tabs.\n- My name is Ada."}, {Label: ".mx-claw/MEMORY.md", Text: "- Run make check before pushing."}},
		Skills: []SkillEntry{{Name: "changelog-writer", Description: "Writes the CHANGELOG entry for a release."},
			{Name: "pdf-forms", Description: "Fills in PDF forms."}},
		MoreSkills: 3,
	}
}

// The memory and skills sections follow the environment block; every
// change to their wording shows as a diff of the golden file.
func TestSystemPromptGoldenWithMemoryAndSkills(t *testing.T) {
	t.Parallel()
	dir := realTempDir(t)
	p := BuildPrompt(goldenEnv(dir, permission.ModeDefault)).WithContext(goldenContext())
	got := strings.ReplaceAll(p.Text(), dir, "$WORKSPACE")
	checkGolden(t, "nogit-default-memory-skills.md", got)
	plain := BuildPrompt(goldenEnv(dir, permission.ModeDefault))
	if !strings.HasPrefix(p.Text(), plain.Text()) {
		t.Error("the sections are not after the plain prompt")
	}
	if p.WithContext(nil).Text() != plain.Text() {
		t.Error("no context still adds sections")
	}
}

func testContext(frozenSkills int) SessionContextFunc {
	return func(ctx context.Context, sess *protocol.Session, first string) SessionContext {
		sc := *goldenContext()
		sc.Warnings = []string{"memory file MEMORY.md is cut"}
		for i := 0; i < frozenSkills; i++ {
			sc.Frozen.Skills = append(sc.Frozen.Skills, protocol.FrozenSkill{Name: "s" + string(rune('a'+i)), Listed: true})
		}
		sc.Frozen.Memory = []protocol.FrozenMemory{{Label: "USER.md", Bytes: 30, SHA256: "abc"}}
		return sc
	}
}

// A new session's first request carries the sections and every later
// request repeats the system prompt byte for byte; what it was frozen with
// is recorded with the first message; the skill tool is offered exactly
// when the session has skills, the same on every request.
func TestSessionContextFrozenAndSkillToolOffered(t *testing.T) {
	t.Parallel()
	for _, withSkills := range []bool{true, false} {
		n := 0
		if withSkills {
			n = 2
		}
		f := newFixture(t, Options{SessionContext: testContext(n)}, skills.NewTool(func(context.Context, string) (*skills.Catalog, error) {
			return skills.NewCatalog(nil), nil
		}))
		f.srv.Enqueue(llmtest.Text("one"), llmtest.Text("two"))
		s := f.session()
		ctx := context.Background()
		var evs []protocol.Event
		sink := func(e protocol.Event) { evs = append(evs, e) }
		for _, in := range []string{"first", "second"} {
			if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: in}, sink); err != nil {
				t.Fatal(err)
			}
		}
		reqs := f.srv.ChatRequests()
		prompt := reqs[0].Chat.Messages[0].Content
		for _, want := range []string{"# Memory\n<memory>", "## About the user (USER.md)\n- I use tabs.", "# Skills\n", "- pdf-forms: Fills in PDF forms.",
			"3 more skills are not listed"} {
			if !strings.Contains(prompt, want) {
				t.Errorf("first request lacks %q", want)
			}
		}
		if reqs[1].Chat.Messages[0].Content != prompt {
			t.Error("the second turn's system prompt differs")
		}
		for i, r := range reqs {
			if got := slices.Contains(r.Chat.Tools, skills.ToolName); got != withSkills {
				t.Errorf("skills %v: request %d offers the skill tool: %v", withSkills, i, got)
			}
		}
		stored, _ := f.st.Events(ctx, s.ID, 0, 0)
		frozen, warned := 0, 0
		for _, e := range stored {
			if e.Type == protocol.EventContextFrozen && e.Context != nil && len(e.Context.Skills) == n && e.Context.Memory[0].Label == "USER.md" {
				frozen++
			}
			if e.Type == protocol.EventWarning && strings.Contains(e.Text, "MEMORY.md is cut") {
				warned++
			}
		}
		if frozen != 1 || warned != 1 {
			t.Errorf("context.frozen stored %d times, warning %d times; want 1 each", frozen, warned)
		}
	}
}

// Requests to remember are recorded as memory.candidate before
// turn.completed; a failure to keep them is a warning, and the turn still
// completes.
func TestRememberAfterTurn(t *testing.T) {
	t.Parallel()
	var typed []string
	fail := false
	f := newFixture(t, Options{Remember: func(ctx context.Context, sess *protocol.Session, msg *protocol.Message, text string) ([]protocol.MemoryCandidate, error) {
		typed = append(typed, text)
		if fail {
			return nil, errors.New("disk full")
		}
		return []protocol.MemoryCandidate{{ID: "m1", File: "USER.md", Text: "I use tabs.", MessageSeq: msg.Seq}}, nil
	}})
	f.srv.Enqueue(llmtest.Text("noted"), llmtest.Text("ok"))
	s := f.session()
	var types []protocol.EventType
	var cand *protocol.MemoryCandidate
	sink := func(e protocol.Event) {
		types = append(types, e.Type)
		if e.Candidate != nil {
			cand = e.Candidate
		}
	}
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "remember that I use tabs"}, sink); err != nil {
		t.Fatal(err)
	}
	ci, di := slices.Index(types, protocol.EventMemoryCandidate), slices.Index(types, protocol.EventTurnCompleted)
	if ci < 0 || di < ci || cand.MessageSeq != 2 || typed[0] != "remember that I use tabs" {
		t.Errorf("events %v, candidate %+v", types, cand)
	}
	fail = true
	types = nil
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "remember x"}, sink); err != nil {
		t.Fatalf("a failure to keep a candidate failed the turn: %v", err)
	}
	if !slices.Contains(types, protocol.EventWarning) || !slices.Contains(types, protocol.EventTurnCompleted) {
		t.Errorf("events %v", types)
	}
}

// proposals records what ProposeSkill was given.
type proposals struct {
	mu      sync.Mutex
	got     []skills.Trajectory
	answers []string
	done    chan struct{}
}

func (p *proposals) propose(ctx context.Context, tr skills.Trajectory, answer string) (*protocol.SkillProposal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, tr)
	p.answers = append(p.answers, answer)
	if p.done != nil {
		close(p.done)
	}
	return &protocol.SkillProposal{Name: "listing"}, nil
}

func fiveCalls(lastOK bool) []llmtest.Reply {
	var out []llmtest.Reply
	for i := 0; i < 4; i++ {
		out = append(out, llmtest.Call("glob", `{"pattern":"*.`+string(rune('a'+i))+`"}`))
	}
	last := llmtest.Call("list_dir", `{"path":"."}`)
	if !lastOK {
		last = llmtest.Call("read_file", `{"path":"missing.txt"}`)
	}
	out = append(out, last, llmtest.Text("listed"))
	for i := range out {
		out[i].Usage = &llmtest.Usage{PromptTokens: 10, CompletionTokens: 1}
	}
	return out
}

// A turn of five successful tool calls is shown to the model after
// turn.completed, and what it writes goes to ProposeSkill with the
// trajectory; its usage is added to the session. A turn whose last call
// failed, a turn with too few calls, and proposals turned off give none.
func TestSkillProposal(t *testing.T) {
	t.Parallel()
	p := &proposals{done: make(chan struct{})}
	f := newFixture(t, Options{ProposeSkill: p.propose, MaxIterations: 10})
	f.srv.Enqueue(fiveCalls(true)...)
	f.srv.Enqueue(llmtest.Reply{Text: "---\nname: listing\ndescription: Lists.\n---\nList it.", ChunkDelay: 50 * time.Millisecond})
	s := f.session()
	ctx := context.Background()
	var completedAt time.Time
	sink := func(e protocol.Event) {
		if e.Type == protocol.EventTurnCompleted {
			completedAt = time.Now()
		}
	}
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "list it five times"}, sink); err != nil {
		t.Fatal(err)
	}
	if completedAt.IsZero() {
		t.Fatal("no turn.completed")
	}
	f.core.WaitBackground(ctx)
	select {
	case <-p.done:
	default:
		t.Fatal("no proposal after a five-call turn")
	}
	tr := p.got[0]
	if len(tr.Steps) != 5 || tr.Request != "list it five times" || tr.Answer != "listed" || tr.SessionID != s.ID || !strings.Contains(p.answers[0], "name: listing") {
		t.Errorf("trajectory %+v, answer %q", tr, p.answers[0])
	}
	reqs := f.srv.ChatRequests()
	last := reqs[len(reqs)-1]
	if len(last.Chat.Tools) != 0 || !strings.Contains(last.Chat.Messages[1].Content, "5. list_dir") {
		t.Errorf("proposal request: tools %v, %q", last.Chat.Tools, last.Chat.Messages[1].Content)
	}
	stored, _ := f.st.Events(ctx, s.ID, 0, 0)
	var kinds []protocol.EventType
	for _, e := range stored {
		kinds = append(kinds, e.Type)
	}
	if i, j := slices.Index(kinds, protocol.EventTurnCompleted), slices.Index(kinds, protocol.EventSkillProposed); i < 0 || j < i {
		t.Errorf("skill.proposed is not stored after turn.completed: %v", kinds)
	}
	sess, _ := f.st.GetSession(ctx, s.ID)
	turnUsage := int64(0)
	for _, e := range stored {
		if e.Type == protocol.EventUsage && e.Usage != nil {
			turnUsage += e.Usage.InputTokens + e.Usage.OutputTokens
		}
	}
	if sess.Usage.InputTokens+sess.Usage.OutputTokens != turnUsage {
		t.Errorf("session usage %+v, the usage events sum to %d", sess.Usage, turnUsage)
	}

	// None for a failing end, a short turn, or when a session budget
	// would not cover it.
	before := len(f.srv.ChatRequests())
	f.srv.Enqueue(fiveCalls(false)...)
	f.srv.Enqueue(llmtest.Call("list_dir", `{"path":"."}`), llmtest.Text("short"))
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "fail at the end"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "short"}, nil); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue(fiveCalls(true)...)
	sess, _ = f.st.GetSession(ctx, s.ID)
	if err := f.core.Run(ctx, TurnRequest{SessionID: s.ID, Input: "over budget", Budget: Budget{MaxSessionTokens: sess.Usage.InputTokens + sess.Usage.OutputTokens + 1000}}, nil); err != nil {
		t.Fatal(err)
	}
	f.core.WaitBackground(ctx)
	if n := len(f.srv.ChatRequests()) - before; n != 6+2+6 || len(p.got) != 1 {
		t.Errorf("%d requests after the first proposal, %d proposals; want 14 and 1", n, len(p.got))
	}
}

// A turn that loaded a skill is covered by it: nothing is proposed.
func TestSkillProposalCoveredBySkill(t *testing.T) {
	t.Parallel()
	p := &proposals{}
	f := newFixture(t, Options{ProposeSkill: p.propose, MaxIterations: 10}, skills.NewTool(func(context.Context, string) (*skills.Catalog, error) {
		return skills.NewCatalog([]skills.Skill{{Name: "x", Description: "X.", Dir: t.TempDir()}}), nil
	}))
	replies := append([]llmtest.Reply{llmtest.Call(skills.ToolName, `{"query":"x"}`)}, fiveCalls(true)...)
	f.srv.Enqueue(replies...)
	s := f.session()
	if err := f.core.Run(context.Background(), TurnRequest{SessionID: s.ID, Input: "go"}, nil); err != nil {
		t.Fatal(err)
	}
	f.core.WaitBackground(context.Background())
	if len(p.got) != 0 {
		t.Errorf("proposed after a turn that used a skill: %+v", p.got)
	}
}
