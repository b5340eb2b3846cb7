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
// Not supported: Claude Code's !`command` lines (running a shell command
// while expanding a prompt would run it without the permission checks
// every other command passes) and @file references in a command's body.
// Both stay in the prompt as text.
//
// Who may import it: the application's wiring (app) and the CLI. It
// imports safefile and frontmatter.
package slashcmd
