// Package memory gathers the standing instructions and notes a session
// starts with:
//
//   - AGENTS.md: [Load] discovers the files that apply to a workspace,
//     merges them outermost first under header lines, caps their total
//     size and says what it cut; a [Cache] keeps repeated discovery from
//     re-reading files that did not change.
//   - Long-term memory (DESIGN §9, notes.go): [LoadNotes] reads
//     memory/USER.md and memory/MEMORY.md of the home and, in a trusted
//     workspace, .mx-claw/MEMORY.md, each capped at 8 KiB with a warning
//     when cut.
//   - Candidates (detect.go, candidates.go): [Detect] finds explicit
//     requests to remember in a user's message ("remember that …",
//     "记住…"); [Candidates] keeps them, with where they came from, until
//     a person accepts one (its line is added to the memory file, written
//     atomically) or rejects it. A candidate is never read into a prompt.
//
// The package reads files (and writes only candidates and the memory
// files a person accepts them into): it does not freeze anything into a
// session (DESIGN §2, invariant 4). The agent calls Load and LoadNotes on
// a session's first turn and stores the text; later edits affect new
// sessions only. The CLI may call it to show what a workspace would load
// and to review candidates. memory imports only safefile, which opens
// files without blocking and only if they are regular (a named pipe or a
// device as AGENTS.md is skipped with a warning, never waited on).
//
// Decisions, for the record:
//
//   - Only files named AGENTS.md count: no CLAUDE.md fallback and no
//     AGENTS.override.md. One name keeps the rule easy to state.
//   - The repository root is the nearest ancestor of the workspace (or the
//     workspace itself) holding an entry named .git, a directory or a file
//     (worktrees and submodules use a file). Outside a repository only the
//     workspace directory is searched, never its parents.
//   - Paths are canonical (symbolic links resolved), so a symlinked
//     workspace finds its real repository and a file reached twice (say,
//     the home file linked into a repository) is included once, at its
//     innermost place.
//   - Over the size cap the files nearest the workspace win: they are kept
//     whole, the first one that does not fit is cut (its beginning kept,
//     with a marker) and the ones further out are dropped. Every cut is
//     reported in Context.Warnings, never silently.
//   - Unreadable files, directories named AGENTS.md and broken links are
//     warnings, not errors: a session should start without them rather
//     than not at all. Only a missing or unusable workspace is an error.
package memory
