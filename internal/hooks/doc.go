// Package hooks is mx-claw's hooks engine: user-configured shell commands
// that run at points of a session (DESIGN §7). It owns the hook settings
// format — Claude Code's, unchanged, so people can bring the hooks they
// already have — the matching of hooks to an event, running them, reading
// what they say, and folding their answers into one [Result]. It decides
// nothing by itself about permissions: [Combine] is the one place a hook's
// answer meets a permission decision, and it can only tighten a deny.
//
// # Who may import it
//
// The agent (to run hooks around prompts, tool calls, compaction and the
// end of a turn), the CLI (to validate settings and show configured hooks)
// and the app wiring. It imports execx (to run commands) and permission
// (for [permission.Action] in [Combine]), both leaves; it knows nothing of
// sessions, the store or the tools.
//
// Loading settings files and workspace trust are the caller's: it hands
// [ParseConfig] the `hooks` object of each settings file it has decided to
// honour (project hooks only once the folder is trusted) and [Merge]s them,
// user first, then project.
//
// # Settings format
//
//	{"hooks": {
//	  "PreToolUse": [
//	    {"matcher": "run_command|Write",
//	     "hooks": [{"type": "command", "command": "~/bin/check.sh", "timeout": 30}]}
//	  ],
//	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]
//	}}
//
// Events are SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop
// and PreCompact; any other name is an error. The matcher is a regular
// expression (RE2) matched against the whole subject, as if written
// `^(?:matcher)$`; empty, missing or `*` matches everything. For
// PreToolUse and PostToolUse the subject is the tool name, and Claude Code's
// tool names are accepted as aliases of mx-claw's (Bash = run_command,
// Read = read_file, Write = write_file, Edit and MultiEdit = edit_file,
// Glob = glob, Grep = grep, LS = list_dir, TodoWrite = todo_write), so
// `Edit|Write` matches edit_file and write_file. For SessionStart the
// subject is [Event.Source] (startup, resume, clear, compact), for
// PreCompact [Event.Trigger] (manual, auto); UserPromptSubmit and Stop
// ignore the matcher. Timeouts are in seconds; the default is 60.
//
// Settings are strict: an unknown key, a "type" other than "command" or an
// invalid matcher is a [*ConfigError] naming the file and the entry
// (`settings.json: hooks.PreToolUse[0].hooks[1]: "type" must be "command"`),
// so a typo never silently drops a hook.
//
// # Running
//
// Every matching hook runs, one after the other in configuration order
// (user settings first), through execx: `bash -c` in its own process group,
// killed with everything it started when it ends, times out or ctx is
// cancelled; working directory [Event.Cwd]; environment from the execx
// allow-list (never API keys or other secrets) plus MX_CLAW_PROJECT_DIR and
// CLAUDE_PROJECT_DIR set to Cwd. Running them in order rather than in
// parallel (as Claude Code does) costs latency only when several hooks
// match, and makes "the last updatedInput wins" well defined. Every hook
// sees the event as it came: an updatedInput is not passed on to the next
// hook. All matching hooks run even after one has blocked.
//
// Each hook gets a JSON object on stdin with Claude Code's field names:
// session_id, transcript_path, cwd, permission_mode (when known),
// hook_event_name, and per event tool_name and tool_input (PreToolUse,
// PostToolUse; tool_name is mx-claw's name, e.g. run_command),
// tool_response (PostToolUse), prompt (UserPromptSubmit), source
// (SessionStart), trigger and custom_instructions (PreCompact),
// stop_hook_active (Stop).
//
// # What a hook can say
//
//   - Exit 0: continue. Stdout that starts with `{` is read as JSON:
//     `{"decision": "block"|"approve", "reason": …}`,
//     `{"continue": false, "stopReason": …}`, `systemMessage` (shown to the
//     user as a warning) and `hookSpecificOutput` with hookEventName,
//     permissionDecision ("allow", "deny", "ask"),
//     permissionDecisionReason, updatedInput and additionalContext. Plain
//     stdout of a UserPromptSubmit or SessionStart hook is additional
//     context for the model; elsewhere it is ignored.
//   - Exit 2: block, with stderr as the reason given to the model.
//   - Any other exit status: a warning to the user (with the first lines of
//     stderr); the session goes on as if the hook had not run.
//   - A timeout: the warning `hook "<command>" timed out after 60s`; the
//     session goes on.
//
// What blocking means is the caller's, per event: PreToolUse refuses the
// call, PostToolUse feeds the reason to the model (the tool has run),
// UserPromptSubmit rejects the prompt, Stop keeps the turn going with the
// reason as the model's next instruction (see [Event.StopHookActive]).
// SessionStart and PreCompact cannot block; a block there becomes a
// warning. Permission decisions ("approve", permissionDecision) and
// updatedInput mean something only for PreToolUse and are ignored, with a
// warning, elsewhere.
//
// # Folding several answers
//
// Block and deny beat ask, ask beats allow, allow beats no opinion; the
// reasons of every hook that gave the winning kind of answer are joined.
// The last updatedInput wins; additional contexts are concatenated in
// order; warnings are collected; any `"continue": false` sets
// [Result.Halt].
//
// # Hooks never lift a deny
//
// The caller, for a PreToolUse, should: run the hooks; if they gave an
// updatedInput, validate it again against the tool's schema (a hook is as
// untrusted as the model) and use it; decide permissions on the input that
// will really run; then apply [Combine]. Combine lets a hook's allow turn
// an ask into an allow, and a hook's ask or deny tighten anything, but
// nothing turns a deny (a deny rule, plan mode, a hard check) into less.
// An ask that must stand whatever anyone says (permission asks for
// commands it cannot judge in every mode, bypass included) is the caller's
// to keep: apply a hook's allow only to asks that rules or the mode made.
package hooks
