package agent

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/mx-claw/mx-claw/internal/llm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/skills"
	"github.com/mx-claw/mx-claw/internal/tools"
)

// A new session's system prompt holds, after its instructions and
// environment, the user's long-term memory and the index of the skills it
// may load (DESIGN §9), each as a section of its own. Both are taken once,
// at the first turn, with the rest of the prompt, and the list of skills
// and the memory files used are recorded with the session
// (context.frozen): later edits reach new sessions only, and every
// request of the session repeats the prompt byte for byte.

// The sections' templates, parsed once and only executed afterwards.
var (
	//go:embed prompts/memory.md
	memoryText string
	//go:embed prompts/skills.md
	skillsText string

	memoryTemplate = template.Must(template.New("memory").Parse(memoryText))
	skillsTemplate = template.Must(template.New("skills").Parse(skillsText))
)

// SessionContext is what a new session's system prompt holds besides its
// instructions and environment.
type SessionContext struct {
	// Memory are the memory files, in order.
	Memory []MemoryNote
	// Skills are the skills the index lists, sorted by name; MoreSkills
	// counts the loadable ones it leaves out.
	Skills     []SkillEntry
	MoreSkills int
	// Warnings say what was cut or left out; each becomes a warning event.
	Warnings []string
	// Frozen is recorded with the session (context.frozen).
	Frozen protocol.FrozenContext
}

// MemoryNote is one memory file in the prompt.
type MemoryNote struct {
	// Label is the file's name ("USER.md", "MEMORY.md",
	// ".mx-claw/MEMORY.md"); Text what the prompt shows of it.
	Label, Text string
}

// Title is the heading the prompt gives the file.
func (n MemoryNote) Title() string {
	switch n.Label {
	case "USER.md":
		return "About the user"
	case "MEMORY.md":
		return "Notes"
	}
	return "Notes for this project"
}

// SkillEntry is one line of the skill index.
type SkillEntry struct {
	Name, Description string
}

// SessionContextFunc returns the context of a new session in a workspace
// whose first message is firstMessage.
type SessionContextFunc func(ctx context.Context, sess *protocol.Session, firstMessage string) SessionContext

// Sections renders the memory and skills sections of the prompt ("" for
// an empty one).
func (sc *SessionContext) Sections() (memory, skills string) {
	if sc == nil {
		return "", ""
	}
	if len(sc.Memory) > 0 {
		memory = execute(memoryTemplate, sc.Memory)
	}
	if len(sc.Skills) > 0 {
		skills = execute(skillsTemplate, struct {
			Skills []SkillEntry
			More   int
		}{sc.Skills, sc.MoreSkills})
	}
	return memory, skills
}

func execute(t *template.Template, data any) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		// The templates are fixed and tested; an error here is a bug.
		panic(fmt.Sprintf("agent: %s template: %v", t.Name(), err))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// WithContext returns p with the memory and skills sections of sc.
func (p Prompt) WithContext(sc *SessionContext) Prompt {
	p.Memory, p.Skills = sc.Sections()
	return p
}

// sessionContext takes a new session's memory and skills, emitting a
// warning event for each problem; nil when none are configured.
func (t *turn) sessionContext(firstMessage string) *SessionContext {
	if t.core.opts.SessionContext == nil {
		return nil
	}
	sc := t.core.opts.SessionContext(t.ctx, t.sess, firstMessage)
	for _, w := range sc.Warnings {
		t.emit(protocol.Event{Type: protocol.EventWarning, Text: w})
	}
	return &sc
}

// withSections appends the memory and skills sections of sc to an
// embedder's system prompt.
func withSections(prompt string, sc *SessionContext) string {
	memory, skills := sc.Sections()
	for _, part := range []string{memory, skills} {
		if part != "" {
			prompt += "\n\n" + part
		}
	}
	return prompt
}

// frozenScan bounds the events searched for a session's context.frozen:
// it is stored with the session's first message, among its first events.
const frozenScan = 32

// frozenSkills reports whether the session was frozen with skills, from
// its context.frozen event.
func (t *turn) frozenSkills() bool {
	evs, err := t.core.opts.Store.Events(t.bg, t.sess.ID, 0, frozenScan)
	if err != nil {
		return false
	}
	for _, e := range evs {
		if e.Type == protocol.EventContextFrozen && e.Context != nil {
			return len(e.Context.Skills) > 0
		}
	}
	return false
}

// offeredTools returns the tool schemas of the turn's requests.
func (t *turn) offeredTools() []llm.Tool { return offeredTools(t.tools, t.hasSkills) }

// offeredTools returns the tool schemas of a session's requests: every
// tool of the registry, but the skill tool only for a session with
// skills. A session without skills pays nothing for the feature, and the
// set stays the same on every request of a session (its skills are
// frozen), so the prompt cache keeps working.
func offeredTools(reg *tools.Registry, hasSkills bool) []llm.Tool {
	specs := toolSpecs(reg)
	if hasSkills {
		return specs
	}
	out := specs[:0]
	for _, s := range specs {
		if s.Name != skills.ToolName {
			out = append(out, s)
		}
	}
	return out
}
