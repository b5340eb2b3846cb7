// Package skills finds SKILL.md folders, ranks them against a task and
// renders the index a new session's system prompt carries; it keeps the
// skills the model proposes until a person accepts or rejects them; and it
// provides the skill tool that loads one skill's instructions on demand.
//
// A skill is a folder holding SKILL.md: YAML front matter with name and
// description (optional allowed-tools, license, compatibility, metadata)
// and Markdown instructions, the format of Claude Code and of the Agent
// Skills specification, read unchanged. Where they are (DESIGN §9):
//
//   - $MX_CLAW_HOME/skills/active/<name>/ — the user's own, and the ones
//     a person accepted;
//   - .mx-claw/skills/, .claude/skills/ and .agents/skills/ of a workspace
//     the user trusts (a stranger's repository must not steer the model);
//   - the skills/ folder of each enabled plugin, named "plugin:skill";
//   - $MX_CLAW_HOME/skills/proposed/<name>/ holds proposals, which are
//     never loaded: they reach a session only once accepted.
//
// Every file is read through safefile (regular files only, capped); in a
// workspace and in a plugin a symbolic link is refused wherever it would
// let the tree reach outside itself.
//
// Freezing (DESIGN §2, invariant 4) is the agent's business: Discover is
// called once, on a session's first turn; the index is rendered into the
// system prompt and the list of skills is stored with the session, so a
// skill added mid-session reaches the next session only. The skill tool
// loads a skill's body when it is called, from the folder the frozen list
// names.
//
// With many skills the index lists the ones that best match the session's
// first message, ranked by BM25 over their names and descriptions
// (bm25.go); the skill tool searches the rest.
//
// Who may import it: the application's wiring (app), the CLI and the
// agent. It imports safefile, frontmatter and tools (for the tool's
// interface).
package skills
