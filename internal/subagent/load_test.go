package subagent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The files below have the shapes of agent files in public repositories'
// .claude/agents folders: a comma-separated tools string with a Claude
// Code model alias, a YAML list with maxTurns, and a description full of
// unquoted colons and <example> blocks that is not valid YAML.
const (
	reviewer = `---
name: code-reviewer
description: Reviews code changes for correctness, regressions and missing verification.
tools: Read, Glob, Grep, Bash
model: sonnet
---

You are a focused code reviewer.

Lead with findings, ordered by severity.
`
	listed = `---
name: test-runner
description: "Runs the tests and reports failures"
tools:
  - Read
  - Bash
  - mcp__github__get_issue
disallowedTools: Write
maxTurns: 15
model: deepseek/deepseek-chat
color: green
---
Run the tests.
`
	colons = `---
name: docs-writer
description: Use this agent when docs need writing. Examples: <example>Context: The user added a flag. user: 'document it' assistant: 'I will use the docs-writer agent'</example>
model: inherit
color: blue
---

You write documentation.
`
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       Definition
	}{
		{"comma tools and alias", reviewer, Definition{Name: "code-reviewer",
			Description: "Reviews code changes for correctness, regressions and missing verification.",
			Prompt:      "You are a focused code reviewer.\n\nLead with findings, ordered by severity.",
			Tools:       []string{"read_file", "glob", "grep", "run_command"}}},
		{"yaml list", listed, Definition{Name: "test-runner", Description: "Runs the tests and reports failures",
			Prompt: "Run the tests.", Tools: []string{"read_file", "run_command", "mcp__github__get_issue"},
			Disallowed: []string{"write_file"}, MaxTurns: 15, Model: "deepseek/deepseek-chat"}},
		{"not yaml", colons, Definition{Name: "docs-writer",
			Description: "Use this agent when docs need writing. Examples: <example>Context: The user added a flag. user: 'document it' assistant: 'I will use the docs-writer agent'</example>",
			Prompt:      "You write documentation."}},
		{"crlf and empty tools", "---\r\nname: x\r\ndescription: d\r\ntools:\r\n---\r\nbody\r\n",
			Definition{Name: "x", Description: "d", Prompt: "body"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.text), "f")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"no front matter\n", "no front matter"},
		{"---\ndescription: d\n---\n", "no name"},
		{"---\nname: x\n---\n", "no description"},
		{"---\nname: a b\ndescription: d\n---\n", `name "a b"`},
		{"---\nname: x\ndescription: d\nmaxTurns: lots\n---\n", "maxTurns"},
		{"---\nname: x\ndescription: d\n", "no front matter"},
	} {
		_, err := Parse([]byte(tc.text), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.text, err, tc.want)
		}
	}
}

func TestLoadPlacesAndTrust(t *testing.T) {
	t.Parallel()
	home, ws := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "agents", "reviewer.md"), reviewer)
	write(filepath.Join(home, "agents", "broken.md"), "---\nname: broken\n---\n")
	write(filepath.Join(home, "agents", "notes.txt"), "ignored")
	write(filepath.Join(ws, ".claude", "agents", "runner.md"), listed)
	// The project's .mx-claw folder wins over its .claude one and the
	// user's files.
	write(filepath.Join(ws, ".mx-claw", "agents", "reviewer.md"),
		strings.Replace(reviewer, "Reviews code changes", "Project reviewer", 1))
	// A linked file is refused.
	if err := os.Symlink(filepath.Join(home, "agents", "reviewer.md"), filepath.Join(ws, ".claude", "agents", "linked.md")); err != nil {
		t.Fatal(err)
	}

	names := func(defs []Definition) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	defs, warnings := Load(LoadOptions{Home: home, Workspace: ws})
	if got := names(defs); !reflect.DeepEqual(got, []string{"explore", "general", "code-reviewer"}) {
		t.Errorf("untrusted: %v", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "broken.md") {
		t.Errorf("warnings %q", warnings)
	}
	defs, warnings = Load(LoadOptions{Home: home, Workspace: ws, Trusted: true})
	if got := names(defs); !reflect.DeepEqual(got, []string{"explore", "general", "code-reviewer", "test-runner"}) {
		t.Errorf("trusted: %v", got)
	}
	for _, d := range defs {
		if d.Name == "code-reviewer" && !strings.HasPrefix(d.Description, "Project reviewer") {
			t.Errorf("the project's .mx-claw file should win: %+v", d)
		}
	}
	if len(warnings) != 2 || !strings.Contains(strings.Join(warnings, "\n"), "linked.md") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestAllows(t *testing.T) {
	t.Parallel()
	d := Definition{Tools: []string{"read_file", "grep"}, Disallowed: []string{"grep"}}
	if !d.Allows("read_file") || d.Allows("grep") || d.Allows("write_file") {
		t.Error("Allows with a tool list")
	}
	if !(Definition{}).Allows("anything") {
		t.Error("no list allows all")
	}
}
