// Package hooks is mx-claw's hooks engine: user-configured shell commands
// that run at points of a session (DESIGN §7). It owns the hook settings
// format — Claude Code's, unchanged, so people can bring the hooks they
// already have — the matching of hooks to an event, what a hook is told
// (Claude Code's input, with Claude Code's tool names and fields), running
// hooks, reading what they say, and folding their answers into one
// [Result]. It decides nothing by itself about permissions: [Combine] is
// the one place a hook's answer meets a permission decision, and it can
// only tighten a deny.
//
// # Who may import it
//
// The agent (to run hooks around prompts, tool calls, approvals,
// compaction and the end of a turn or session), the CLI (to validate
// settings and show configured hooks) and the app wiring. It imports
// execx (to run commands), permission (for [permission.Action] in
// [Combine]), protocol (the transcript's messages) and patch (to see an
// apply_patch as the edits it makes), all leaves; it knows nothing of
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
//	    {"matcher": "Bash|Write",
//	     "hooks": [{"type": "command", "command": "~/bin/check.sh", "timeout": 30}]}
//	  ],
//	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date", "async": true}]}]
//	}}
//
// mx-claw runs hooks for SessionStart, UserPromptSubmit, PreToolUse,
// PermissionRequest, PostToolUse, PostToolUseFailure, Notification, Stop,
// PreCompact, PostCompact, SessionEnd, SubagentStart and SubagentStop
// ([Events]). Every other Claude Code event (Setup, TeammateIdle, …) loads
// and never runs, and so does an
// unknown event name; [Config.Notices] says so, once, naming the file and
// the entry. The matcher is a regular expression (RE2) matched against the
// whole subject, as if written `^(?:matcher)$`; empty, missing or `*`
// matches everything. For tool events the subject is the tool name —
// Claude Code's (Bash, Read, Write, Edit, MultiEdit, Glob, Grep, LS,
// TodoWrite) or mx-claw's (run_command, read_file, …) — so `Edit|Write`
// matches edit_file, write_file and every file an apply_patch writes. For
// SessionStart the subject is [Event.Source], for PreCompact and
// PostCompact [Event.Trigger], for Notification [Event.NotificationType],
// for SessionEnd [Event.Reason], for SubagentStart and SubagentStop the
// subagent type ([Event.AgentType]); UserPromptSubmit and Stop ignore it.
//
// What Claude Code accepts loads: an entry key mx-claw does not use is
// kept (Hook.Extra) with a notice, a hook type other than "command"
// ("prompt", "agent", "http") is skipped with a notice, any timeout is
// accepted (in seconds; the default is 60, more than a day is a day, a
// value that is not a positive number gives the default with a notice),
// and "async": true runs the hook in the background. Only what nothing
// could run is a [*ConfigError] naming the file and the entry
// (`settings.json: hooks.PreToolUse[0].hooks[1]: "command" must be a
// non-empty string`): a value of the wrong JSON type, a group without
// "hooks", an invalid matcher, so a broken guard never goes unnoticed.
//
// # What a hook is told
//
// Each hook gets a JSON object on stdin with Claude Code's field names:
// session_id, transcript_path, cwd, permission_mode (Claude Code's
// spelling: default, acceptEdits, plan, bypassPermissions) and
// hook_event_name, and per event: tool_name, tool_input and tool_use_id
// (tool events), tool_response (PostToolUse), error and is_interrupt
// (PostToolUseFailure), prompt (UserPromptSubmit), source and model
// (SessionStart), trigger and custom_instructions (PreCompact), trigger and
// compact_summary (PostCompact), stop_hook_active and
// last_assistant_message (Stop), message, title and notification_type
// (Notification), reason (SessionEnd), and, in a subagent, agent_id and
// agent_type (every event), with stop_hook_active, last_assistant_message
// and agent_transcript_path for SubagentStop, whose session_id and
// transcript_path are the parent's, as in Claude Code.
//
// A tool call is shown as Claude Code would have made it: tool_name is
// Claude Code's name, tool_input has Claude Code's fields (file_path, an
// absolute path; Bash's timeout in milliseconds; Grep's glob, -i, -C)
// with mx-claw's own beside them (path as the model gave it, workdir, …),
// and tool_response has the tool's Claude Code shape (Bash: stdout,
// stderr, interrupted; Write: type, filePath, content, originalFile,
// structuredPatch; Edit: filePath, oldString, newString, originalFile,
// structuredPatch; Read: type and file) with mx-claw's "content" (the
// result the model got) and "isError" beside it. An apply_patch is shown
// as the edits it makes, each file once: an added file as a Write, a
// changed one as an Edit (one hunk) or a MultiEdit, a deleted one as a
// Write of nothing, a move as an Edit of the old path and a Write of the
// new one; the hooks run for each, so no guard on Edit|Write is bypassed
// through a patch. An updatedInput may use either tool's field names; one
// for an apply_patch is refused.
//
// transcript_path is a JSONL file in Claude Code's format ([Transcript]),
// written under [Runner.DataDir] only when a hook is about to run.
//
// # Running
//
// Every matching hook runs, one after the other in configuration order
// (user settings first), through execx: `bash -c` in its own process group,
// killed with everything it started when it ends, times out or ctx is
// cancelled; working directory [Event.Cwd]; environment from the execx
// allow-list (never API keys or other secrets) plus MX_CLAW_PROJECT_DIR and
// CLAUDE_PROJECT_DIR set to Cwd, and for SessionStart hooks
// CLAUDE_ENV_FILE ([Runner.EnvFile]), whose `export` lines the agent
// evaluates before each of the session's commands. Running them in order
// rather than in parallel (as Claude Code does) costs latency only when
// several hooks match, and makes "the last updatedInput wins" well
// defined. Every hook sees the event as it came: an updatedInput is not
// passed on to the next hook. All matching hooks run even after one has
// blocked. An async hook is started and left to run: it decides nothing,
// and [Runner.Wait] (at the end of the turn) waits for it and reports what
// it said.
//
// # What a hook can say
//
//   - Exit 0: continue. Stdout that starts with `{` is read as JSON:
//     `{"decision": "block"|"approve", "reason": …}`,
//     `{"continue": false, "stopReason": …}`, `systemMessage` (shown to the
//     user as a warning), `suppressOutput` (accepted; mx-claw never shows a
//     hook's stdout anyway) and `hookSpecificOutput` with hookEventName,
//     permissionDecision ("allow", "deny", "ask"),
//     permissionDecisionReason, updatedInput and additionalContext, or for
//     PermissionRequest decision {behavior "allow"|"deny", message,
//     updatedInput, interrupt}. Plain stdout of a UserPromptSubmit or
//     SessionStart hook is additional context for the model; elsewhere it
//     is ignored.
//   - Exit 2: block, with stderr as the reason given to the model.
//   - Any other exit status: a warning to the user (with the first lines of
//     stderr); the session goes on as if the hook had not run.
//   - A timeout: the warning `hook "<command>" timed out after 60s`; the
//     session goes on.
//
// What blocking means is the caller's, per event: PreToolUse refuses the
// call, PermissionRequest denies it, PostToolUse and PostToolUseFailure
// feed the reason to the model (the tool has run), UserPromptSubmit
// rejects the prompt and erases it, Stop keeps the turn going with the
// reason as the model's next instruction, every time it blocks (the hook
// reads stop_hook_active to end the loop, as with Claude Code). The other
// events cannot block; a block there becomes a warning. Permission
// decisions and updatedInput mean something only for PreToolUse and
// PermissionRequest and are ignored, with a warning, elsewhere.
// "continue": false from any hook stops the turn after the event, and
// wins over a block; its stopReason is for the user.
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
// The same holds for a PermissionRequest hook's allow.
package hooks
