package subagent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// maxFile caps one agent file.
const maxFile = 256 << 10

// LoadOptions say where to look for agent files.
type LoadOptions struct {
	// Home is $MX_CLAW_HOME; its agents/ folder is read if set.
	Home string
	// Workspace is the session's workspace; its .claude/agents/ and
	// .mx-claw/agents/ folders are read only if Trusted.
	Workspace string
	Trusted   bool
}

// Load returns the built-in subagent types and the user-defined ones, in
// a stable order (built-ins first, then by name), with a warning for each
// file that could not be used.
func Load(o LoadOptions) ([]Definition, []string) {
	byName := map[string]Definition{}
	var warnings []string
	for _, d := range BuiltIn() {
		byName[d.Name] = d
	}
	add := func(defs []Definition, warns []string) {
		warnings = append(warnings, warns...)
		for _, d := range defs {
			byName[d.Name] = d
		}
	}
	if o.Home != "" {
		add(loadDir(filepath.Join(o.Home, "agents"), func(name string) ([]byte, error) {
			return safefile.ReadFile(filepath.Join(o.Home, "agents", name), maxFile)
		}))
	}
	if o.Trusted && o.Workspace != "" {
		for _, rel := range []string{".claude/agents", ".mx-claw/agents"} {
			add(loadDir(filepath.Join(o.Workspace, rel), func(name string) ([]byte, error) {
				return safefile.ReadInTree(o.Workspace, rel+"/"+name, maxFile)
			}))
		}
	}
	out := make([]Definition, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		bi, bj := out[i].Source == "built-in", out[j].Source == "built-in"
		if bi != bj {
			return bi
		}
		return out[i].Name < out[j].Name
	})
	return out, warnings
}

// loadDir reads the *.md files of dir (not its subfolders) with read.
func loadDir(dir string, read func(name string) ([]byte, error)) ([]Definition, []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{fmt.Sprintf("subagents: %s: %v", dir, err)}
	}
	var defs []Definition
	var warnings []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := read(e.Name())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("subagent file %s skipped: %v", path, err))
			continue
		}
		d, err := Parse(data, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("subagent file %s skipped: %v", path, err))
			continue
		}
		d.Source = path
		defs = append(defs, d)
	}
	return defs, warnings
}

// validName is what a subagent type may be called: what the model writes
// as subagent_type.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

// Parse reads one agent file. fallbackName is used when the front matter
// has no name (Claude Code requires one; a file name is a fair guess
// only for the error message).
func Parse(data []byte, fallbackName string) (Definition, error) {
	front, body, ok := splitFrontMatter(data)
	if !ok {
		return Definition{}, errors.New("no front matter (a --- block with name and description)")
	}
	fields, err := frontMatter(front)
	if err != nil {
		return Definition{}, err
	}
	d := Definition{
		Name:        scalar(fields["name"]),
		Description: strings.TrimSpace(scalar(fields["description"])),
		Prompt:      strings.TrimSpace(body),
		Model:       modelOf(scalar(fields["model"])),
	}
	if d.Name == "" {
		return Definition{}, fmt.Errorf("no name in the front matter (the file %s.md needs `name: …`)", fallbackName)
	}
	if !validName.MatchString(d.Name) {
		return Definition{}, fmt.Errorf("name %q: use letters, digits, '-', '_', '.' or ':'", d.Name)
	}
	if d.Description == "" {
		return Definition{}, fmt.Errorf("subagent %q has no description", d.Name)
	}
	if v := list(fields["tools"]); strings.TrimSpace(strings.Join(v, "")) != "" {
		// An empty tools field means all tools, as if it were left out.
		d.Tools = toolNames(v)
	}
	if v, ok := fields["disallowedTools"]; ok {
		d.Disallowed = toolNames(list(v))
	}
	if v := scalar(fields["maxTurns"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Definition{}, fmt.Errorf("subagent %q: maxTurns %q is not a positive number", d.Name, v)
		}
		d.MaxTurns = n
	}
	return d, nil
}

// splitFrontMatter returns the front matter and the body of a file that
// starts with a "---" line.
func splitFrontMatter(data []byte) (front, body string, ok bool) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return "", "", false
	}
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		return "", strings.TrimPrefix(rest, "---"), true
	}
	i := strings.Index(rest, "\n---\n")
	switch {
	case i >= 0:
		return rest[:i+1], rest[i+5:], true
	case strings.HasSuffix(rest, "\n---"):
		return rest[:len(rest)-3], "", true
	}
	return "", "", false
}

// frontMatter parses the front matter as YAML, or, when that fails (an
// unquoted colon in a description is common, and Claude Code takes it),
// line by line: a line "key: value" starting at the left edge begins a
// field, and the lines after it, up to the next such line, continue its
// value.
func frontMatter(front string) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(front), &m); err == nil {
		if m == nil {
			m = map[string]any{}
		}
		return m, nil
	}
	m = map[string]any{}
	key := regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*):(?:\s+(.*))?$`)
	var cur string
	for _, line := range strings.Split(front, "\n") {
		if g := key.FindStringSubmatch(line); g != nil {
			cur = g[1]
			m[cur] = unquote(strings.TrimSpace(g[2]))
			continue
		}
		if cur == "" || strings.TrimSpace(line) == "" {
			continue
		}
		prev, _ := m[cur].(string)
		if item, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok && (prev == "" || isList(m[cur])) {
			items, _ := m[cur].([]any)
			m[cur] = append(items, unquote(strings.TrimSpace(item)))
			continue
		}
		m[cur] = strings.TrimSpace(prev + " " + strings.TrimSpace(line))
	}
	if len(m) == 0 {
		return nil, errors.New("front matter is neither YAML nor key: value lines")
	}
	return m, nil
}

func isList(v any) bool { _, ok := v.([]any); return ok }

// unquote strips one pair of matching quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		if s[0] == '"' {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
		return s[1 : len(s)-1]
	}
	return s
}

// scalar returns a front matter value as text.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		return strings.Join(list(x), ", ")
	}
	return fmt.Sprint(v)
}

// list returns a front matter value as a list: a YAML list, or a string
// of comma-separated names.
func list(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, strings.Split(scalar(e), ",")...)
		}
		return out
	case nil:
		return []string{}
	}
	return strings.Split(scalar(v), ",")
}
