// Package permission decides whether a tool call may run: allow, ask the
// user, or deny. It owns the permission modes, the allow/ask/deny rules and
// their settings files, the shell-command classifier that splits a command
// line into simple commands and judges each one, the catastrophic-command
// list, and the narrowest rule to offer when asking.
//
// Deciding is pure: [Policy.Decide] stores nothing, prompts nobody and runs
// nothing. Pending approvals, grant storage, audit, hooks and the CLI are
// built on top of this API by their owners; they record user and hook
// decisions with [SourceUser] and [SourceHook] so every audited decision
// has a [Source].
//
// # Who may import it
//
// The agent (to decide each call), the CLI (`mx-claw permissions test`,
// settings validation) and the app wiring. The decision code imports no
// other mx-claw package: callers pass plain values (tool name, risk,
// canonical paths, command text), so it stays a leaf that is cheap to test.
//
// # What callers provide
//
// [Request.Workspace], [Request.Home] and [Request.Paths] must be canonical
// (absolute, symlinks resolved — tools.Workspace.Resolve gives them) so that
// path rules and the catastrophic check compare like with like; [ArgPaths]
// lists the paths a built-in tool's arguments name. Without Paths, Decide
// derives them from Args lexically.
//
// # Decision order
//
// Every call is split into subjects: the paths a file tool touches, or the
// simple commands (and file redirections) of a shell command line. Each
// subject is judged on its own, and the call gets the strictest result
// (deny > ask > allow); its Source names the rule, mode or check that made
// it. For one subject the first step that applies wins:
//
//  1. hard check: a catastrophic command is denied, in every mode;
//  2. a matching deny rule denies;
//  3. a command that cannot be judged statically (parse failure, command
//     name built from expansions such as $x or $IFS, a script piped into a
//     shell, a recursive delete of an unresolved path) asks — in every mode,
//     bypass included — and is denied in plan mode;
//  4. plan mode denies anything that is not read-only, with guidance
//     ("plan mode: … is not allowed; describe the change instead");
//  5. a matching ask rule asks;
//  6. a read-only command (see [ReadOnlyCommands]) or a read is allowed;
//  7. a matching allow rule (settings, session and project grants) allows;
//  8. the mode decides: bypass allows; acceptEdits allows writes to paths
//     inside the workspace (except .git and .mx-claw, which always ask);
//     default asks.
//
// Explicit rules beat modes: an ask rule still asks in bypass mode, and
// plan mode beats allow rules. Nothing beats a deny rule or a hard check,
// and the tools' own checks (workspace confinement, .git never written)
// still run after an allow — approval is not the last line (DESIGN §2.5).
//
// # Rules
//
// A rule is `tool` or `tool(pattern)`:
//
//   - `run_command(go test:*)` (or `run_command(go test *)`) matches any
//     simple command whose words start with `go test`, on word boundaries:
//     `git log:*` does not match `git logout`. `run_command(npm run build)`
//     matches exactly that simple command, and an exact pattern that is a
//     whole command line (`run_command(make && make test)`) matches that
//     exact line. Rules are matched against every simple command found,
//     including those inside `sudo`, `xargs`, `bash -c "…"`, `find -exec`
//     and the like; deny and ask rules also match the program's base name
//     (`/bin/rm` matches `rm:*`).
//   - File tools take a doublestar glob matched against the canonical
//     path: relative to the workspace root (`src/**`), `~/`-prefixed
//     (`~/.ssh/**`) or absolute. `read_file(…)` rules also cover list_dir,
//     glob and grep; `edit_file(…)` rules also cover write_file and
//     apply_patch.
//   - A tool name may contain `*` (`*`, `mcp__github__*`), matching any
//     tool name of that shape; such a rule cannot take a pattern.
//   - The Claude Code tool names Bash, Read, Edit, MultiEdit, Write, Glob,
//     Grep and LS are accepted as aliases so existing settings carry over
//     (but `/x` is an absolute path here, not relative to the settings
//     file).
//
// # Trust
//
// Project settings (.mx-claw/settings.json) come from the workspace, which
// may be a stranger's repository. Until the user trusts the folder they may
// only tighten: their deny and ask rules apply, their allow rules and a
// defaultMode looser than the user's are ignored and reported by
// [Policy.Ignored] so the UI can say so.
//
// # Limits
//
// Path rules apply to file tools, not to shell commands: `cat ~/.ssh/id_rsa`
// is read-only whatever `read_file(~/.ssh/**)` says (deny it with a
// run_command rule). A grep or glob over a directory that contains a denied
// path is not refused; the tool must filter. Programs found through a PATH
// the user already set (e.g. ./node_modules/.bin) are trusted like system
// ones.
//
// # Files that are read
//
// Deciding is pure except for one read: before classifying a git command
// as read-only the classifier reads the repository's own config
// (.git/config, following worktree gitdir files) to refuse read-only
// status when it sets helpers that run programs (core.pager,
// core.fsmonitor, diff.external, …).
package permission
