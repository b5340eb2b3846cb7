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
// canonical paths, command text), so it stays a leaf that is cheap to test;
// its one mx-claw import is package safefile, for the files it reads.
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
//  2. a matching deny rule denies; so does a read_file deny rule matching
//     a file a command names (its arguments, input redirections, git's
//     REV:PATH, a glob's matches), an edit_file or write_file deny rule
//     matching a file a command writes (an output redirection's target,
//     the files tee, cp, mv, install, ln, rsync, sed -i, perl -i, dd of=,
//     touch, truncate, rm, chmod and the like change), and — a hard check — a path in a
//     well-known secret store (see [SecretStores]: ~/.ssh, ~/.aws,
//     ~/.gnupg, ~/.config/gh, ~/.docker/config.json, ~/.netrc, … and the
//     mx-claw home's secrets, config and database) that no allow rule
//     names (`read_file(~/.ssh/id_ed25519.pub)` names it, `read_file(~/**)`
//     does not), for every tool and every command;
//  3. a command that cannot be judged statically (parse failure, command
//     name built from expansions such as $x or $IFS, a script piped into a
//     shell, a recursive delete of an unresolved path) asks — in every mode,
//     bypass included — and is denied in plan mode;
//  4. plan mode denies anything that is not read-only, with guidance
//     ("plan mode: … is not allowed; describe the change instead");
//  5. a matching ask rule asks; so does, while edit_file or write_file
//     deny rules exist, a command that writes a file whose name cannot be
//     known before it runs (`tee $f`), in every mode;
//  6. a read-only command (see [ReadOnlyCommands]) or a read is allowed —
//     unless the command reads outside the workspace (a path argument or
//     its directory resolves outside it, or an argument cannot be known
//     before it runs), or searches recursively (rg, grep -r, git grep,
//     find -exec) a directory holding files a read deny rule or a secret
//     store covers: then it asks (step 8), in plan mode too;
//  7. a matching allow rule (settings, session and project grants) allows;
//  8. the mode decides: bypass allows; acceptEdits allows writes to paths
//     inside the workspace, except protected ones, which ask and are named
//     as such: .git, .mx-claw, .claude and files that make other programs
//     run code or follow instructions (.mcp.json, .envrc, .vscode/
//     settings.json, tasks.json and launch.json, .idea, shell startup files
//     such as .bashrc, .gitconfig, .gitmodules, .husky, pre-commit config,
//     AGENTS.md and CLAUDE.md). A protected path is recognised as written
//     and as its links resolve, without regard to case; default asks.
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
//     (`~/.ssh/**`) or absolute. A call is judged on each path as the
//     caller resolved it and as its arguments write it (links followed and
//     not), and must pass for all. `read_file(…)` rules also cover
//     list_dir, glob and grep (which leave denied files out of their
//     results, see [Policy.ReadDenied]) and the files shell commands name;
//     `edit_file(…)` rules also cover write_file and apply_patch.
//   - `web_fetch(domain:docs.python.org)` matches a URL whose host is
//     docs.python.org or one of its subdomains (dot-suffix on the parsed
//     host: `domain:python.org` does not match python.org.evil.net). Such
//     an allow rule also lets web_fetch reach the host on a loopback or
//     private address ([Policy.NamesHost]). web_fetch and web_search ask
//     in every mode but bypass unless a rule decides.
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
// may be a stranger's repository. [LoadProjectSettings] refuses them when
// .mx-claw or settings.json is a symbolic link, and until the user trusts
// the folder parses only what can tighten: their deny and ask rules apply,
// their allow rules, other keys (hooks, …) and a defaultMode looser than
// the user's are ignored and reported by [Policy.Ignored] so the UI can
// say so.
//
// # Limits
//
// The files a shell command names are found from its words: a program
// that reads a file named nowhere on its command line (a config file, a
// path built inside a script) is not seen, and git commands that show
// history (git log -p, git show REV) can show a denied file's past
// content. Deny such commands with a run_command rule where it matters.
// Programs found through a PATH the user already set (e.g.
// ./node_modules/.bin) are trusted like system ones.
//
// # Files that are read
//
// Deciding reads the file system in two ways. It resolves symbolic links
// in the paths it judges (lstat and readlink only). And before
// classifying a git command as read-only the classifier reads the
// repository's own config (.git/config, following worktree gitdir files)
// to refuse read-only status when it sets helpers that run programs
// (core.pager, core.fsmonitor, diff.external, …); that read goes through
// package safefile, so a named pipe or a huge file there cannot hang it.
package permission
