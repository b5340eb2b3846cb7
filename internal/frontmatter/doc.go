// Package frontmatter reads the YAML front matter of Markdown files: the
// block between a first line "---" and the next line "---" that Claude
// Code's skills, slash commands and subagents, and the Agent Skills
// format, put their metadata in.
//
// The YAML is read with a real YAML parser (go.yaml.in/yaml/v3), so block
// scalars ("description: >"), quoted strings and lists read as their
// authors meant. Files written by hand often break YAML in one way that
// other tools forgive — an unquoted value holding ": " ("description: Use
// when: the user asks") — so a block the parser refuses is read once more
// line by line, each top-level "key: value" taken as a string, and the
// result says so (Lenient), rather than the file being skipped.
//
// Who may import it: any package that reads such files (skills, slashcmd,
// plugins). It imports no mx-claw package.
package frontmatter
