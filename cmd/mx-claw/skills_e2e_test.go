package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mx-claw/mx-claw/internal/llm/llmtest"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// writeHomeFile writes a file under the home, making its folders.
func (e *env) writeHomeFile(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// skillMD is a SKILL.md in the shape of Anthropic's and Claude Code's.
func skillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n\n" + body + "\n"
}

// systemPrompt returns the first message of a request.
func systemPrompt(t *testing.T, req llmtest.Request) string {
	t.Helper()
	if len(req.Chat.Messages) == 0 || req.Chat.Messages[0].Role != "system" {
		t.Fatal("the request does not start with a system prompt")
	}
	return req.Chat.Messages[0].Content
}

// userMessage returns the last user message of a request.
func userMessage(req llmtest.Request) string {
	for i := len(req.Chat.Messages) - 1; i >= 0; i-- {
		if m := req.Chat.Messages[i]; m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func (e *env) mustRun(args ...string) result {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != 0 {
		e.t.Fatalf("mx-claw %v: exit %d\n%s", args, r.code, r.stderr)
	}
	return r
}

// An active skill is listed in the first request's system prompt, and the
// skill tool returns its body and its other files.
func TestSkillListedAndLoaded(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Call("skill", `{"name":"release-notes"}`),
		llmtest.Call("skill", `{"name":"release-notes","file":"scripts/since-tag.sh"}`),
		llmtest.Text("done"))
	e.writeHomeFile("skills/active/release-notes/SKILL.md", skillMD("release-notes",
		"Drafts release notes from the commits since the last tag. Use when a release is prepared.",
		"# Release notes\n\n1. Run scripts/since-tag.sh.\n2. Group the commits as Added, Changed, Fixed."))
	e.writeHomeFile("skills/active/release-notes/scripts/since-tag.sh", "git log $(git describe --tags --abbrev=0)..HEAD --oneline\n")
	e.mustRun("run", "write the release notes")
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	prompt := systemPrompt(t, reqs[0])
	if !strings.Contains(prompt, "<skills>\n- release-notes: Drafts release notes from the commits since the last tag. Use when a release is prepared.\n</skills>") {
		t.Errorf("the first request does not list the skill:\n%s", prompt)
	}
	if !slices.Contains(reqs[0].Chat.Tools, "skill") {
		t.Errorf("the skill tool is not offered: %v", reqs[0].Chat.Tools)
	}
	body := toolResults(reqs[1])
	var got string
	for _, v := range body {
		got = v
	}
	for _, want := range []string{"2. Group the commits as Added, Changed, Fixed.", "- scripts/since-tag.sh (", filepath.Join(e.home, "skills", "active", "release-notes")} {
		if !strings.Contains(got, want) {
			t.Errorf("the skill tool's result lacks %q:\n%s", want, got)
		}
	}
	file := ""
	for _, v := range toolResults(reqs[2]) {
		if strings.Contains(v, "git describe") {
			file = v
		}
	}
	if file == "" {
		t.Errorf("the skill's script was not read through the tool: %v", toolResults(reqs[2]))
	}
}

// The skill index and the memory are frozen at a session's first turn: a
// skill added mid-session is absent from that session's requests (and the
// tool cannot load it) and present in the next session's; sessions show
// lists what each was frozen with.
func TestSkillAddedMidSessionReachesNextSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Call("skill", `{"name":"late"}`), llmtest.Text("two"), llmtest.Text("three"))
	e.writeHomeFile("skills/active/early/SKILL.md", skillMD("early", "Installed before the session.", "Early body."))
	e.writeHomeFile("memory/USER.md", "- I prefer short answers.\n")
	r := e.mustRun("run", "--json", "hello")
	first := sessionOf(t, r.events(t))
	e.writeHomeFile("skills/active/late/SKILL.md", skillMD("late", "Installed during the session.", "Late body."))
	e.writeHomeFile("memory/USER.md", "- I prefer long answers.\n")
	e.mustRun("run", "--continue", "use the late skill")
	e.mustRun("run", "a new session")
	reqs := e.srv.ChatRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	p0 := systemPrompt(t, reqs[0])
	for i := 1; i < 3; i++ {
		if systemPrompt(t, reqs[i]) != p0 {
			t.Fatalf("request %d of the first session has another system prompt", i)
		}
	}
	if strings.Contains(p0, "- late:") || !strings.Contains(p0, "- early: Installed before the session.") || !strings.Contains(p0, "I prefer short answers") {
		t.Errorf("first session's prompt:\n%s", p0)
	}
	for _, v := range toolResults(reqs[2]) {
		if !strings.Contains(v, `No skill named "late" in this session`) {
			t.Errorf("a skill added mid-session was loaded: %s", v)
		}
	}
	p3 := systemPrompt(t, reqs[3])
	if !strings.Contains(p3, "- late: Installed during the session.") || !strings.Contains(p3, "I prefer long answers") {
		t.Errorf("the next session's prompt lacks the new skill or memory:\n%s", p3)
	}
	show := e.mustRun("sessions", "show", first)
	if !strings.Contains(show.stdout, "Skills    early\n") || !strings.Contains(show.stdout, "Memory    USER.md (26 bytes") {
		t.Errorf("sessions show does not list the frozen skills and memory:\n%s", show.stdout)
	}
	var d struct {
		Context protocol.FrozenContext `json:"context"`
	}
	if err := json.Unmarshal([]byte(e.mustRun("sessions", "show", first, "--json").stdout), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Context.Skills) != 1 || d.Context.Skills[0].Name != "early" || !d.Context.Skills[0].Listed || len(d.Context.Memory) != 1 {
		t.Errorf("sessions show --json context: %+v", d.Context)
	}
}

// An untrusted workspace's skills, commands and memory are ignored; once
// the user trusts it they apply.
func TestUntrustedProjectExtensionsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"))
	e.writeWS(".claude/skills/deploy-check/SKILL.md", skillMD("deploy-check", "Checks a deployment.", "Check it."))
	e.writeWS(".agents/skills/lint-fix/SKILL.md", skillMD("lint-fix", "Fixes lint warnings.", "Fix them."))
	e.writeWS(".mx-claw/MEMORY.md", "- The staging host is staging.example.com.\n")
	e.writeWS(".mx-claw/commands/deploy.md", "---\ndescription: Deploy\n---\nDeploy to $1 now.\n")
	r := e.mustRun("run", "/deploy prod")
	if !strings.Contains(r.stderr, "No custom command /deploy") {
		t.Errorf("stderr %q", r.stderr)
	}
	list := e.mustRun("skills", "list")
	if strings.Contains(list.stdout, "deploy-check") {
		t.Errorf("skills list shows an untrusted project's skill:\n%s", list.stdout)
	}
	e.mustRun("run", "--trust", "/deploy prod")
	reqs := e.srv.ChatRequests()
	p0, p1 := systemPrompt(t, reqs[0]), systemPrompt(t, reqs[1])
	if strings.Contains(p0, "deploy-check") || strings.Contains(p0, "staging.example.com") || userMessage(reqs[0]) != "/deploy prod" ||
		slices.Contains(reqs[0].Chat.Tools, "skill") {
		t.Errorf("an untrusted project reached the prompt:\n%s\nuser: %q", p0, userMessage(reqs[0]))
	}
	for _, want := range []string{"- deploy-check: Checks a deployment.", "- lint-fix: Fixes lint warnings.", "## Notes for this project (.mx-claw/MEMORY.md)\n- The staging host is staging.example.com."} {
		if !strings.Contains(p1, want) {
			t.Errorf("the trusted project's prompt lacks %q:\n%s", want, p1)
		}
	}
	if got := userMessage(reqs[1]); got != "Deploy to prod now." {
		t.Errorf("the trusted project's command sent %q", got)
	}
}

// "remember that I use tabs" becomes a candidate (a memory.candidate
// event, with where it came from) that is not in the next session's
// prompt until a person accepts it, and is after.
func TestRememberCandidateReviewed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("Noted."), llmtest.Text("a"), llmtest.Text("b"))
	r := e.mustRun("run", "--json", "remember that I use tabs")
	var cand *protocol.MemoryCandidate
	sid := sessionOf(t, r.events(t))
	for _, ev := range r.events(t) {
		if ev.Type == protocol.EventMemoryCandidate {
			cand = ev.Candidate
		}
		if ev.Type == protocol.EventTurnCompleted && cand == nil {
			t.Error("turn.completed came before memory.candidate")
		}
	}
	if cand == nil || cand.Text != "I use tabs." || cand.File != "USER.md" || cand.MessageSeq != 2 {
		t.Fatalf("candidate %+v", cand)
	}
	e.mustRun("run", "hello")
	if p := systemPrompt(t, e.srv.ChatRequests()[1]); strings.Contains(p, "I use tabs") {
		t.Fatalf("a candidate reached a prompt before it was accepted:\n%s", p)
	}
	var list []struct {
		ID, File, Text, Quote, SessionID string
	}
	if err := json.Unmarshal([]byte(e.mustRun("memory", "candidates", "--json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != cand.ID || list[0].Quote != "remember that I use tabs" || list[0].SessionID != sid {
		t.Fatalf("candidates %+v", list)
	}
	if bad := e.run("", "memory", "accept", "mnothere"); bad.code != 2 {
		t.Errorf("accept of an unknown id: exit %d", bad.code)
	}
	e.mustRun("memory", "accept", cand.ID)
	e.mustRun("run", "hello again")
	if p := systemPrompt(t, e.srv.ChatRequests()[2]); !strings.Contains(p, "## About the user (USER.md)\n- I use tabs.") {
		t.Errorf("the accepted memory is not in the next session's prompt:\n%s", p)
	}
	if data, _ := os.ReadFile(filepath.Join(e.home, "memory", "USER.md")); string(data) != "- I use tabs.\n" {
		t.Errorf("USER.md = %q", data)
	}
	if left := e.mustRun("memory", "candidates", "--json"); strings.TrimSpace(left.stdout) != "[]" {
		t.Errorf("candidates after accept: %s", left.stdout)
	}
}

// proposalsOn rewrites the config with skill proposals on.
func (e *env) proposalsOn() {
	e.t.Helper()
	cfg := strings.Replace(string(mustRead(e.t, filepath.Join(e.home, "config.json"))), `"proposals":false`, `"proposals":true`, 1)
	e.writeHome("config.json", cfg)
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fiveStepTask is a turn of five successful tool steps; lastFails makes
// its last call fail.
func fiveStepTask(lastFails bool) []llmtest.Reply {
	out := []llmtest.Reply{
		llmtest.Call("list_dir", `{"path":"."}`),
		llmtest.Call("glob", `{"pattern":"*.go"}`),
		llmtest.Call("read_file", `{"path":"main.go"}`),
		llmtest.Call("grep", `{"pattern":"func main"}`),
		llmtest.Call("read_file", `{"path":"go.mod"}`),
	}
	if lastFails {
		out[4] = llmtest.Call("read_file", `{"path":"missing.go"}`)
	}
	return append(out, llmtest.Text("The entry point is main.go."))
}

const proposedSkill = "---\nname: find-entry-point\ndescription: Finds the entry point of a Go program. Use when asked where a program starts.\n---\n\n1. Glob for *.go.\n2. Grep for func main.\n"

// A scripted successful five-step trajectory produces a proposed skill
// (the fake model answers the proposal request): kept with its provenance
// and trajectory, never active, never in a prompt, until accepted. A turn
// whose last step failed produces none.
func TestSkillProposalFromTrajectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, append(fiveStepTask(false), llmtest.Text(proposedSkill), llmtest.Text("next"), llmtest.Text("after"))...)
	e.proposalsOn()
	e.writeWS("main.go", "package main\n\nfunc main() {}\n")
	e.writeWS("go.mod", "module demo\n")
	r := e.mustRun("run", "--json", "where does this program start?")
	sid := sessionOf(t, r.events(t))
	reqs := e.srv.ChatRequests()
	if len(reqs) != 7 || len(reqs[6].Chat.Tools) != 0 || !strings.Contains(reqs[6].Chat.Messages[1].Content, "where does this program start?") {
		t.Fatalf("%d requests; the last should be the proposal request", len(reqs))
	}
	dir := filepath.Join(e.home, "skills", "proposed", "find-entry-point")
	var prov struct {
		SessionID, Request string
		Steps              int
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ".proposal", "proposal.json")), &prov); err != nil {
		t.Fatal(err)
	}
	if prov.SessionID != sid || prov.Steps != 5 || prov.Request != "where does this program start?" {
		t.Errorf("provenance %+v", prov)
	}
	var tr struct{ Steps []struct{ Tool string } }
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ".proposal", "trajectory.json")), &tr); err != nil || len(tr.Steps) != 5 || tr.Steps[3].Tool != "grep" {
		t.Errorf("trajectory %+v, %v", tr, err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "skills", "active", "find-entry-point")); err == nil {
		t.Fatal("the proposal is active")
	}
	if list := e.mustRun("skills", "list"); strings.Contains(list.stdout, "find-entry-point") {
		t.Errorf("skills list shows a proposal:\n%s", list.stdout)
	}
	if prop := e.mustRun("skills", "proposed"); !strings.Contains(prop.stdout, "find-entry-point  Finds the entry point") {
		t.Errorf("skills proposed:\n%s", prop.stdout)
	}
	e.mustRun("run", "next")
	if p := systemPrompt(t, e.srv.ChatRequests()[7]); strings.Contains(p, "find-entry-point") {
		t.Errorf("a proposal reached a prompt:\n%s", p)
	}
	e.mustRun("skills", "accept", "find-entry-point")
	e.mustRun("run", "after")
	if p := systemPrompt(t, e.srv.ChatRequests()[8]); !strings.Contains(p, "- find-entry-point: Finds the entry point of a Go program.") {
		t.Errorf("the accepted skill is not listed:\n%s", p)
	}

	// A failing end: no proposal request, nothing proposed.
	f := newEnv(t, fiveStepTask(true)...)
	f.proposalsOn()
	f.writeWS("main.go", "package main\n\nfunc main() {}\n")
	f.mustRun("run", "where does this program start?")
	if n := len(f.srv.ChatRequests()); n != 6 {
		t.Errorf("%d requests after a turn that failed at the end, want 6 (no proposal)", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.home, "skills", "proposed")); len(entries) != 0 {
		t.Errorf("proposed after a failing turn: %v", entries)
	}
}

// completedAfter runs a five-step task and returns how long after the
// start turn.completed came out, and how long the process ran.
func completedAfter(t *testing.T, on bool) (completed, total time.Duration) {
	replies := fiveStepTask(false)
	// The proposal takes its time: about three seconds.
	replies = append(replies, llmtest.Reply{Text: proposedSkill, Pieces: 4, ChunkDelay: 500 * time.Millisecond})
	e := newEnv(t, replies...)
	if on {
		e.proposalsOn()
	}
	e.writeWS("main.go", "package main\n\nfunc main() {}\n")
	e.writeWS("go.mod", "module demo\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	cmd, ch, errb := e.startJSON(ctx, "where does this program start?")
	waitFor(t, ch, protocol.EventTurnCompleted)
	completed = time.Since(start)
	for range ch {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, errb)
	}
	total = time.Since(start)
	if _, err := os.Stat(filepath.Join(e.home, "skills", "proposed", "find-entry-point", "SKILL.md")); (err == nil) != on {
		t.Errorf("proposals on %v: proposed skill there: %v", on, err == nil)
	}
	return completed, total
}

// The proposal never delays turn.completed: with a proposal that takes
// three seconds, turn.completed comes as soon as with proposals off (the
// process finishes the proposal afterwards).
func TestSkillProposalNeverDelaysTurnCompleted(t *testing.T) {
	t.Parallel()
	bestOff, bestOn := time.Hour, time.Hour
	var totalOn time.Duration
	for range 2 {
		off, _ := completedAfter(t, false)
		on, total := completedAfter(t, true)
		bestOff, bestOn, totalOn = min(bestOff, off), min(bestOn, on), max(totalOn, total)
	}
	ratio := float64(bestOn) / float64(bestOff)
	t.Logf("turn.completed after %v with proposals on, %v off (ratio %.2f); the run with the proposal took %v", bestOn, bestOff, ratio, totalOn)
	if ratio > 1.5 && bestOn-bestOff > 300*time.Millisecond {
		t.Errorf("turn.completed came %.2f times later with proposals on (%v vs %v)", ratio, bestOn, bestOff)
	}
	if totalOn < 2*time.Second {
		t.Errorf("the run with proposals on took %v: the proposal did not run", totalOn)
	}
}

// A custom command in Claude Code's format runs headless: `mx-claw run
// /name args` sends its prompt with $ARGUMENTS and $1 filled in, on the
// model its front matter names (for that turn only), with its
// allowed-tools allowed without asking.
func TestCustomCommandHeadless(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Call("write_file", `{"path":"NOTES.md","content":"shipped\n"}`), llmtest.Text("written"),
		llmtest.Call("write_file", `{"path":"OTHER.md","content":"x\n"}`), llmtest.Text("refused"))
	e.writeHomeFile("commands/note.md", "---\ndescription: Write a release note\nargument-hint: [version] [summary]\n"+
		"allowed-tools: Write, Bash(git log:*)\nmodel: fake/other-model\n---\n\nWrite a note for version $1: $ARGUMENTS\nAlways keep notes short.\n")
	r := e.mustRun("run", "--json", "/note v1.2 \"the fast one\"")
	reqs := e.srv.ChatRequests()
	if got := userMessage(reqs[0]); got != "Write a note for version v1.2: v1.2 \"the fast one\"\nAlways keep notes short." {
		t.Errorf("the command sent %q", got)
	}
	if reqs[0].Chat.Model != "other-model" {
		t.Errorf("the command's turn used %q, want its model other-model", reqs[0].Chat.Model)
	}
	if data, err := os.ReadFile(filepath.Join(e.ws, "NOTES.md")); err != nil || string(data) != "shipped\n" {
		t.Errorf("the command's allowed Write did not run: %q %v", data, err)
	}
	// The command's own "Always …" is not the user asking to remember.
	if c := e.mustRun("memory", "candidates", "--json"); strings.TrimSpace(c.stdout) != "[]" {
		t.Errorf("a command's text became a memory candidate: %s", c.stdout)
	}
	sid := sessionOf(t, r.events(t))
	if d := e.show(sid); d.Session.Model != "fake/fake-model" {
		t.Errorf("the session's model became %q; the command's model is for its turn only", d.Session.Model)
	}
	// Without the command, the same write needs approval and is denied.
	e.mustRun("run", "--continue", "write another file")
	if _, err := os.Stat(filepath.Join(e.ws, "OTHER.md")); err == nil {
		t.Error("the command's grant outlived its turn")
	}
}

// A plugin in Claude Code's layout acts only once enabled: its skill, its
// command and its hook.
func TestPluginActsOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Text("one"), llmtest.Text("two"))
	root := "plugins/audit-kit"
	e.writeHomeFile(root+"/.claude-plugin/plugin.json", `{"name": "audit-kit", "version": "0.3.0", "description": "Audit helpers.",
  "author": {"name": "Example"}}`)
	// Its MCP server is mx-claw's own (mcp serve), in Claude Code's .mcp.json.
	e.writeHomeFile(root+"/.mcp.json", `{"mcpServers": {"auditdb": `+e.selfServer()+`}}`)
	e.writeHomeFile(root+"/skills/log-reader/SKILL.md", skillMD("log-reader", "Reads audit logs.", "Use jq."))
	e.writeHomeFile(root+"/commands/audit.md", "---\ndescription: Show the audit log\n---\nShow the audit log for $ARGUMENTS.\n")
	marker := filepath.Join(e.home, "hook-ran")
	e.writeHomeFile(root+"/hooks/hooks.json", `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch `+marker+`; test -d ${CLAUDE_PLUGIN_ROOT}/skills"}]}]}}`)
	list := e.mustRun("plugins", "list")
	if !strings.Contains(list.stdout, "audit-kit  0.3.0  disabled") || !strings.Contains(list.stdout, "MCP server auditdb (its tools are mcp__auditdb__") {
		t.Errorf("plugins list:\n%s", list.stdout)
	}
	e.mustRun("run", "/audit today")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a disabled plugin's hook ran")
	}
	e.mustRun("plugins", "enable", "audit-kit")
	e.mustRun("run", "/audit today")
	reqs := e.srv.ChatRequests()
	if p := systemPrompt(t, reqs[0]); strings.Contains(p, "log-reader") || userMessage(reqs[0]) != "/audit today" {
		t.Errorf("a disabled plugin acted: %q", userMessage(reqs[0]))
	}
	if p := systemPrompt(t, reqs[1]); !strings.Contains(p, "- audit-kit:log-reader: Reads audit logs.") {
		t.Errorf("the enabled plugin's skill is not listed:\n%s", p)
	}
	if hasTool(reqs[0], "mcp__auditdb__list_sessions") || !hasTool(reqs[1], "mcp__auditdb__list_sessions") {
		t.Errorf("the plugin's MCP tools: disabled %v, enabled %v", reqs[0].Chat.Tools, reqs[1].Chat.Tools)
	}
	if got := userMessage(reqs[1]); got != "Show the audit log for today." {
		t.Errorf("the enabled plugin's command sent %q", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the enabled plugin's hook did not run")
	}
	e.mustRun("plugins", "disable", "audit-kit")
	if list := e.mustRun("plugins", "list"); !strings.Contains(list.stdout, "audit-kit  0.3.0  disabled") {
		t.Errorf("after disable:\n%s", list.stdout)
	}
}

// A headless run makes no proposal request unless the config asks for
// proposals: with the key absent, the five-step turn ends after its six
// requests and no proposal is stored.
func TestHeadlessRunProposesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, append(fiveStepTask(false), llmtest.Text(proposedSkill))...)
	cfg := strings.Replace(string(mustRead(t, filepath.Join(e.home, "config.json"))), `"skills":{"proposals":false},`, "", 1)
	if strings.Contains(cfg, "proposals") {
		t.Fatalf("config still names proposals: %s", cfg)
	}
	e.writeHome("config.json", cfg)
	e.writeWS("main.go", "package main\n\nfunc main() {}\n")
	e.writeWS("go.mod", "module demo\n")
	e.mustRun("run", "where does this program start?")
	if n := len(e.srv.ChatRequests()); n != 6 {
		t.Errorf("%d requests, want the turn's 6 and no proposal request", n)
	}
	if _, err := os.Stat(filepath.Join(e.home, "skills", "proposed")); err == nil {
		entries, _ := os.ReadDir(filepath.Join(e.home, "skills", "proposed"))
		if len(entries) > 0 {
			t.Errorf("a proposal was stored: %v", entries)
		}
	}
}
