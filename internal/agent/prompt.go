package agent

import (
	"embed"
	"fmt"
	"path"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/mx-claw/mx-claw/internal/permission"
)

// The system prompt of a new session is the instructions (prompts/system.md
// and, for some model families, a paragraph of prompts/family/) followed by
// the environment block (prompts/environment.md, whose changeable lines
// come from prompts/facts.md), then the user's memory and the skill index
// when there are any (sessionctx.go). It is built once, at the session's first
// turn, and stored as the session's first message: every later request
// repeats it byte for byte, so the provider's prompt cache keeps working.
// What changes later is told by a note (see notes.go), never by rewriting
// the prompt.

//go:embed prompts/system.md
var instructionsText string

//go:embed prompts/environment.md prompts/facts.md
var envFiles embed.FS

//go:embed prompts/family/*.md
var familyFiles embed.FS

// promptTemplates holds the environment block and the fact lines. It is
// parsed once and only executed afterwards, which is safe for concurrent
// use.
var promptTemplates = template.Must(template.New("").Funcs(template.FuncMap{"join": strings.Join}).
	ParseFS(envFiles, "prompts/environment.md", "prompts/facts.md"))

// Environment is what a session's system prompt tells the model about
// where it runs. The first fields are facts of the session's start; the
// date, mode, approvals, sandbox and model may change later, and each
// change is told in a note (see Environment.facts).
type Environment struct {
	// Workspace is the workspace root, absolute and canonical.
	Workspace string
	// ExtraRoots are further directories the tools may use.
	ExtraRoots []string
	// System names the OS and architecture, e.g. "linux/amd64 (Debian
	// GNU/Linux 13 (trixie))".
	System string
	// Git describes the repository holding the workspace; nil if none.
	Git *GitState

	// Date is the session's current local date.
	Date time.Time
	// Mode is the permission mode of the turn.
	Mode permission.Mode
	// Approvals says what happens to a call that needs approval.
	Approvals AskPolicy
	// Sandbox is the OS confinement of commands.
	Sandbox Sandbox
	// Model is the model's id, "provider/model".
	Model string
	// ContextWindow is the model's context window in tokens; 0 if unknown.
	ContextWindow int
	// WindowAssumed says ContextWindow is a default, not the model's.
	WindowAssumed bool
}

// Sandbox describes how commands are confined, in the terms of DESIGN §8.
// The zero value (or Mode "none") says there is no sandbox.
type Sandbox struct {
	// Mode is "none" (no sandbox available), "off" (turned off),
	// "workspace-write" or "read-only".
	Mode string
	// Network says whether commands may use the network.
	Network bool
	// WritableRoots are writable directories besides the workspace and
	// the session's temp dir.
	WritableRoots []string
}

// SandboxNone is the sandbox mode of a process without a sandbox.
const SandboxNone = "none"

// Prompt is a session's system prompt in its parts.
type Prompt struct {
	// Instructions say how to work; they depend only on the model family.
	Instructions string
	// Environment is the <environment> block.
	Environment string
	// Memory is the user's long-term memory section and Skills the skill
	// index (sessionctx.go); either may be empty.
	Memory string
	Skills string
}

// Text returns the system message: the instructions, the environment,
// then the memory and the skill index when there are any.
func (p Prompt) Text() string {
	s := p.Instructions + "\n" + p.Environment
	for _, part := range []string{p.Memory, p.Skills} {
		if part != "" {
			s += "\n" + part
		}
	}
	return s
}

// BuildPrompt returns the system prompt for env.
func BuildPrompt(env *Environment) Prompt {
	return Prompt{Instructions: Instructions(env.Model), Environment: env.render()}
}

// Instructions returns the instructions for a model ("provider/model"):
// prompts/system.md with the paragraphs of the model's families.
func Instructions(model string) string {
	var b strings.Builder
	b.WriteString(instructionsText)
	for _, f := range modelFamilies(model) {
		text, err := familyFiles.ReadFile("prompts/family/" + f + ".md")
		if err != nil {
			continue
		}
		b.WriteString("\n")
		b.Write(text)
	}
	return b.String()
}

// modelFamilies returns the families whose prompt paragraphs apply to a
// model: "reasoning" for models that reason before answering, "open" for
// open-weight models, which more often write a tool call as text. Matching
// is by name, deliberately narrow: a model not matched gets the plain
// instructions, which suit every model.
func modelFamilies(model string) []string {
	provider, name, ok := strings.Cut(strings.ToLower(model), "/")
	if !ok {
		name, provider = provider, ""
	}
	name = path.Base(name) // "org/model" names of gateways
	var fams []string
	reasoning := strings.Contains(name, "reasoner") || strings.Contains(name, "thinking") ||
		strings.Contains(name, "qwq") || strings.Contains(name, "-r1") || strings.HasPrefix(name, "r1") ||
		strings.HasPrefix(name, "gpt-5") ||
		len(name) >= 2 && name[0] == 'o' && name[1] >= '1' && name[1] <= '9'
	if reasoning {
		fams = append(fams, "reasoning")
	}
	open := provider == "ollama" || provider == "lmstudio"
	for _, p := range []string{"llama", "qwen", "mistral", "mixtral", "codestral", "devstral", "gemma",
		"phi", "qwq", "granite", "starcoder", "codellama", "deepseek-coder", "smollm"} {
		if strings.HasPrefix(name, p) {
			open = true
		}
	}
	if open {
		fams = append(fams, "open")
	}
	return fams
}

// envView is what prompts/environment.md is executed on.
type envView struct {
	*Environment
	DateLine, ModeLine, ApprovalsLine, SandboxLine, ModelLine string
}

// render returns the <environment> block.
func (e *Environment) render() string {
	f := e.facts()
	v := envView{Environment: e, DateLine: f[0], ModeLine: f[1], ApprovalsLine: f[2], SandboxLine: f[3], ModelLine: f[4]}
	var b strings.Builder
	if err := promptTemplates.ExecuteTemplate(&b, "environment.md", v); err != nil {
		// The templates are fixed and tested; an error here is a bug.
		panic(fmt.Sprintf("agent: environment template: %v", err))
	}
	return b.String()
}

// facts returns the lines of the environment that may change during a
// session, in the order of the block: date, permission mode, approvals,
// sandbox, model. Each starts with "- NAME:".
func (e *Environment) facts() []string {
	m := permission.Mode(e.Mode.String())
	mode := "mode-" + string(m)
	switch m {
	case permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan, permission.ModeBypass:
	default:
		mode = "mode-other"
	}
	approvals := "approvals-deny"
	switch e.Approvals {
	case AskWait:
		approvals = "approvals-interactive"
	case AskPause:
		approvals = "approvals-pause"
	}
	sb := e.Sandbox
	if sb.Mode == "" {
		sb.Mode = SandboxNone
	}
	sandbox := "sandbox-" + sb.Mode
	switch sb.Mode {
	case SandboxNone, "off", "workspace-write", "read-only":
	default:
		sandbox = "sandbox-other"
	}
	window := "unknown"
	if e.ContextWindow > 0 {
		window = thousands(e.ContextWindow) + " tokens"
		if e.WindowAssumed {
			window += " (assumed: the model is not in mx-claw's catalog)"
		}
	}
	return []string{
		execLine("date", e.Date.Format("2006-01-02 (Monday)")),
		execLine(mode, string(m)),
		execLine(approvals, nil),
		execLine(sandbox, sb),
		execLine("model", struct{ Model, Window string }{e.Model, window}),
	}
}

func execLine(name string, data any) string {
	var b strings.Builder
	if err := promptTemplates.ExecuteTemplate(&b, name, data); err != nil {
		panic(fmt.Sprintf("agent: fact template %s: %v", name, err))
	}
	return b.String()
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
