package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrNoFrontMatter is returned by Parse for a file that does not start with
// a front matter block.
var ErrNoFrontMatter = errors.New("no front matter (the file does not start with a line ---)")

// Split separates a Markdown file into its front matter (the YAML text
// between the opening and closing "---" lines) and its body. A byte order
// mark and CRLF line ends are accepted. ok is false when the file has no
// front matter; body is then the whole file.
func Split(data []byte) (front, body string, ok bool) {
	text := string(bytes.TrimPrefix(data, []byte("\uFEFF")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		if strings.TrimRight(text, " \t") == "---" {
			return "", "", true
		}
		return "", text, false
	}
	// The closing line is "---" alone (trailing blanks allowed), or
	// "..." as YAML allows.
	off := 0
	for {
		line, after, more := strings.Cut(rest[off:], "\n")
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			return rest[:off], after, true
		}
		if !more {
			return "", text, false
		}
		off += len(line) + 1
	}
}

// Result says how a front matter was read.
type Result struct {
	// Body is the Markdown after the front matter.
	Body string
	// Lenient says the YAML parser refused the block and it was read
	// line by line instead (see the package doc); Problem is the parser's
	// complaint.
	Lenient bool
	Problem string
}

// Parse decodes the front matter of data into v (a pointer to a struct
// with yaml tags) and returns the body. A block YAML refuses is decoded
// from its top-level "key: value" lines, each value a string; only when
// that finds nothing either is it an error. A file without front matter
// is an error matching ErrNoFrontMatter, with the whole file as body.
func Parse(data []byte, v any) (Result, error) {
	front, body, ok := Split(data)
	if !ok {
		return Result{Body: body}, ErrNoFrontMatter
	}
	res := Result{Body: body}
	err := yaml.Unmarshal([]byte(front), v)
	if err == nil {
		return res, nil
	}
	loose := looseMap(front)
	if len(loose) == 0 {
		return res, fmt.Errorf("front matter is not YAML: %w", err)
	}
	text, merr := yaml.Marshal(loose)
	if merr != nil {
		return res, fmt.Errorf("front matter is not YAML: %w", err)
	}
	if uerr := yaml.Unmarshal(text, v); uerr != nil {
		return res, fmt.Errorf("front matter is not YAML: %w", err)
	}
	res.Lenient, res.Problem = true, err.Error()
	return res, nil
}

// looseMap reads the top-level "key: value" lines of a block as strings.
// An indented line continues the value before it (folded with a space);
// comments and blank lines are skipped; quotes around a value are removed.
func looseMap(front string) map[string]string {
	out := make(map[string]string)
	last := ""
	for _, line := range strings.Split(front, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last != "" {
				out[last] = strings.TrimSpace(out[last] + " " + t)
			}
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t\"'") {
			last = ""
			continue
		}
		val = strings.TrimSpace(val)
		if val == ">" || val == "|" || val == ">-" || val == "|-" {
			val = ""
		}
		if n := len(val); n >= 2 && (val[0] == '"' && val[n-1] == '"' || val[0] == '\'' && val[n-1] == '\'') {
			val = val[1 : n-1]
		}
		out[key], last = val, key
	}
	return out
}

// List is a list of strings written either as a YAML sequence or as one
// string, its items separated by commas or blanks outside parentheses:
// Claude Code's "Bash(git add:*), Read" and the Agent Skills format's
// "Bash(git:*) Read" both give two items.
type List []string

// UnmarshalYAML accepts a sequence of strings or a single string.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		var items []string
		if err := n.Decode(&items); err != nil {
			return err
		}
		*l = nil
		for _, it := range items {
			if it = strings.TrimSpace(it); it != "" {
				*l = append(*l, it)
			}
		}
		return nil
	case yaml.ScalarNode:
		*l = SplitList(n.Value)
		return nil
	}
	return fmt.Errorf("line %d: want a string or a list of strings", n.Line)
}

// SplitList splits s at commas and blanks that are not inside
// parentheses, dropping empty items.
func SplitList(s string) List {
	var out List
	depth, start := 0, 0
	flush := func(end int) {
		if item := strings.TrimSpace(s[start:end]); item != "" {
			out = append(out, item)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n'):
			flush(i)
			start = i + 1
		}
	}
	flush(len(s))
	return out
}
