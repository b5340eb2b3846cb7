package subagent

import (
	"slices"
	"strings"
)

// The built-in subagent types.
const (
	Explore = "explore"
	General = "general"
)

// Definition is one subagent type.
type Definition struct {
	// Name is what the task tool's subagent_type names.
	Name string
	// Description tells the parent model what the subagent is for and
	// when to use it.
	Description string
	// Prompt is the subagent's instructions, added to its system prompt.
	Prompt string
	// Tools, if set, are the only tools the subagent gets (mx-claw
	// names); nil gives it every tool of its parent. Tools the parent
	// does not have are never given.
	Tools []string
	// Disallowed are tools it never gets (mx-claw names).
	Disallowed []string
	// ReadOnly keeps only tools that do not change anything.
	ReadOnly bool
	// Model is the model to run it on ("provider/model"); "" is the
	// parent's.
	Model string
	// MaxTurns, if positive, is its iteration budget (Claude Code's
	// maxTurns).
	MaxTurns int
	// Source is the file it was read from, or "built-in".
	Source string
}

// Writes reports whether the subagent may change files: it is not
// read-only and it keeps at least one tool that writes or runs commands
// (the caller judges the tools; Writes only rules out the read-only ones).
func (d Definition) Writes() bool { return !d.ReadOnly }

// Allows reports whether the subagent may have the tool called name
// (before the read-only filter, which needs the tool's risk).
func (d Definition) Allows(name string) bool {
	if slices.Contains(d.Disallowed, name) {
		return false
	}
	return d.Tools == nil || slices.Contains(d.Tools, name)
}

// BuiltIn returns the built-in subagent types.
func BuiltIn() []Definition {
	return []Definition{
		{
			Name:        Explore,
			Description: "Read-only research in the codebase; start one per question, they run at once.",
			Prompt: "You are an explore subagent. Research the codebase to answer the task: find the files, read the " +
				"code, search for symbols. You have read-only tools; you cannot change files or run commands that " +
				"change anything. Be thorough but quick. Your final answer is all the caller sees: report what you " +
				"found concisely, with file paths and line numbers.",
			ReadOnly: true,
			Source:   "built-in",
		},
		{
			Name:        General,
			Description: "A self-contained task; may edit files and run commands.",
			Prompt: "You are a general-purpose subagent. Carry out the task completely, using the tools you have. " +
				"Your final answer is all the caller sees: say what you did, which files you changed, and anything " +
				"left undone.",
			Source: "built-in",
		},
	}
}

// claudeTools maps Claude Code's tool names to mx-claw's.
var claudeTools = map[string][]string{
	"Read":      {"read_file"},
	"Write":     {"write_file"},
	"Edit":      {"edit_file", "apply_patch"},
	"MultiEdit": {"edit_file", "apply_patch"},
	"Bash":      {"run_command"},
	"Glob":      {"glob"},
	"Grep":      {"grep"},
	"LS":        {"list_dir"},
	"TodoWrite": {"todo_write"},
	"WebFetch":  {"web_fetch"},
	"WebSearch": {"web_search"},
}

// toolNames turns a list of tool names as an agent file gives them into
// mx-claw's names: Claude Code's names are mapped, "Task(...)" and other
// forms with arguments are dropped (subagents start no subagents), and
// everything else is kept as written (mx-claw names, mcp__server__tool).
func toolNames(in []string) []string {
	out := []string{}
	for _, n := range in {
		n = strings.TrimSpace(n)
		if n == "" || strings.ContainsAny(n, "()") || n == "Task" || n == "Agent" {
			continue
		}
		if m, ok := claudeTools[n]; ok {
			for _, x := range m {
				if !slices.Contains(out, x) {
					out = append(out, x)
				}
			}
			continue
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// modelAliases are Claude Code's model names, which mean "the parent's
// model" here.
var modelAliases = []string{"", "inherit", "sonnet", "opus", "haiku", "default"}

// modelOf returns the mx-claw model id an agent file's model names; "" is
// the parent's.
func modelOf(m string) string {
	m = strings.TrimSpace(m)
	if slices.Contains(modelAliases, strings.ToLower(m)) {
		return ""
	}
	return m
}
