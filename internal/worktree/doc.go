// Package worktree lets a writing subagent work on a branch of its own,
// in a git worktree outside the user's tree, and brings its work back
// when the user agrees.
//
// Create adds a worktree of the user's repository on a new branch, from
// the commit HEAD is at (the user's uncommitted changes are not in it).
// Finish commits what the subagent changed there onto the branch, removes
// the worktree folder and returns the branch with a diff summary; a
// subagent that changed nothing leaves no branch behind. So several
// subagents can write at once without touching each other's files or the
// user's.
//
// Merge is the separate, approved step (the merge_worktree tool, which
// asks in every permission mode but bypass): it applies the branch's
// changes since it forked to the user's working tree, as uncommitted
// changes for the user to review and commit. It refuses, changing
// nothing, when the changes do not apply cleanly — the user changed the
// same lines, uncommitted or committed since — and when they touch what
// mx-claw never writes (.git, .gitmodules, .mx-claw/, .claude/, .mcp.json)
// or add symbolic links or submodules.
//
// Every git command runs without the repository's hooks and fsmonitor, so
// a repository's config starts no program of its own.
//
// Who may import it: the agent (which runs subagents) and the app wiring.
// It imports only internal/tools (for the merge tool).
package worktree
