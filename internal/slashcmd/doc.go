// Package slashcmd reads custom slash commands: Markdown prompt files a
// person types as "/name args" in the REPL or passes to `mx-claw run
// /name args`. The format is Claude Code's, read unchanged: the file's
// name is the command's; front matter may give a description, an
// argument-hint, allowed-tools (the tools the command may use without
// asking, for its turn) and a model (for its turn); the body is the
// prompt, in which $ARGUMENTS stands for everything typed after the name
// and $1, $2, … for its words (quotes group words). A body that mentions
// neither gets the arguments appended, as Claude Code does.
//
// Where commands are, first found wins: $MX_CLAW_HOME/commands/, then in
// a trusted workspace .mx-claw/commands/ and .claude/commands/, then the
// commands/ folder of each enabled plugin. Subfolders organise commands
// without changing their names ("frontend/component.md" is /component).
// Every file is read through safefile; in a workspace or a plugin no
// symbolic link is followed.
//
// # Shell lines and file references
//
// As in Claude Code, a body (after argument substitution) may hold
// !`command` lines, run before the prompt is sent with their output in
// their place, and @path references, whose files are attached. ParseBody
// finds them (see its doc for the exact syntax); Expander resolves them
// with functions the caller gives: Check decides every line before any
// runs, so one refusal leaves nothing run, then the files are read, then
// the lines run in order. Their output and the files' content are never
// searched for more markers. Arguments are substituted first, as Claude
// Code does, so a !`…` typed in them is judged like the file's own. A
// line that would ask is refused, in the REPL too: it is not a tool call
// of a turn, so no approval can be waited for. How a line is judged and run, and how a file
// is read, is the caller's (app: run_command's permission evaluation,
// sandbox and executor; read_file's rules).
//
// Unlike Claude Code, markers and references inside inline code spans and
// fenced code blocks stay text: a fence is how a command file shows the
// syntax, and a shown command must not run. An @word that is not
// path-like (no "/" or ".") and names no file stays text ("@claude"); a
// path-like one that names none is an error, not a silent drop.
//
// Who may import it: the application's wiring (app) and the CLI. It
// imports safefile and frontmatter.
package slashcmd
