// Package sessionio moves sessions in and out of mx-claw: it exports a
// session as JSONL (every message and event, for tools and for import) or
// as Markdown (a transcript for people), with secrets redacted, and it
// reads the sessions other agents keep — Claude Code's project JSONL
// files, codex's rollout files, opencode's storage (JSON files or its
// SQLite database) and gemini-cli's chat recordings and saved chats — as
// well as mx-claw's own exports.
//
// A read session's messages are mapped onto mx-claw's (OpenAI chat shape:
// user, assistant with tool calls and reasoning, tool results), with every
// tool call answered right after the answer that made it (a call the
// source recorded no result for gets one saying so), so a resumed session
// sends a valid request to any model. Records that are not messages (the
// other agent's bookkeeping, subagent records, images it cannot show,
// anything unknown) are kept as notes, never dropped and never sent to a
// model; a record that cannot be parsed is a note too, never an error.
// Each reader's file says what it knows of its format and where that was
// learned (each agent's public source).
//
// The package does not store anything: the caller (the CLI, through the
// app) creates the sessions, and remembers each one's source id so that
// importing again does not duplicate it.
//
// Who may import it: internal/cli and internal/app. It imports protocol and
// the SQLite driver (to read opencode's database).
package sessionio
