// Package subagent knows the kinds of subagent a task call may start: the
// built-in ones and those users define in Markdown files, in Claude Code's
// format, so agent files people already have work unchanged.
//
// A Definition names a subagent type, tells the parent model when to use
// it, limits the tools its session gets and gives the instructions added
// to its system prompt. The built-in types are "explore" (read-only tools;
// several may run at once) and "general" (every tool the parent has but
// the task tool itself; it may write). User-defined types come from
// $MX_CLAW_HOME/agents/*.md, and, in a trusted workspace only, from the
// workspace's .claude/agents/*.md and .mx-claw/agents/*.md; a later place
// wins over an earlier one, and any of them over a built-in of the same
// name. Files are read through internal/safefile: a project's file or
// folder that is a symbolic link is refused.
//
// A file is YAML front matter between "---" lines and a Markdown body, the
// subagent's instructions:
//
//	---
//	name: code-reviewer
//	description: Reviews a change for bugs. Use after editing code.
//	tools: Read, Grep, Glob, Bash
//	model: inherit
//	maxTurns: 15
//	---
//	You are a careful reviewer…
//
// tools is a comma-separated string or a list, in Claude Code's tool names
// (Read, Write, Edit, MultiEdit, Bash, Glob, Grep, LS, TodoWrite,
// WebFetch) or mx-claw's (read_file, run_command, …); without it the
// subagent gets every tool of its parent. disallowedTools takes tools
// away. model is a mx-claw model id ("provider/model"); Claude Code's
// aliases (sonnet, opus, haiku, inherit) mean the parent's model. The
// front matter is read by internal/frontmatter, which also takes what is
// not valid YAML but Claude Code accepts (descriptions with unquoted
// colons). Other keys (color, effort, …) are ignored. A file without a
// name or description is skipped with a warning.
//
// Who may import it: the agent (which runs subagents) and the app wiring.
// It imports internal/safefile and internal/frontmatter.
package subagent
