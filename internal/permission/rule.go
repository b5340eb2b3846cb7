package permission

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"mvdan.cc/sh/v3/syntax"
)

// CommandTool is the name of the shell tool, whose rules take command
// patterns instead of path globs.
const CommandTool = "run_command"

// Rule is one entry of an allow, ask or deny list: `tool` or
// `tool(pattern)`. Build one with ParseRule.
type Rule struct {
	// Text is the rule as written.
	Text string
	// Tool is the tool name the rule applies to, with Claude Code aliases
	// resolved (Bash is run_command); it may contain * wildcards.
	Tool string
	// Pattern is the text between the parentheses, or "" for a rule that
	// matches every call of the tool.
	Pattern string

	kind  ruleKind
	words []string // command words of a prefix or simple exact rule
	whole string   // canonical command line of an exact rule
	host  string   // host of a domain rule
}

type ruleKind int

const (
	ruleTool   ruleKind = iota // every call of the tool
	rulePrefix                 // run_command(go test:*)
	ruleExact                  // run_command(npm run build)
	rulePath                   // read_file(src/**)
	ruleDomain                 // web_fetch(domain:example.com)
)

// String returns the rule as written.
func (r Rule) String() string { return r.Text }

// ParseRule parses `tool` or `tool(pattern)`. For run_command the pattern
// is a command prefix ending in `:*` (or ` *`), `*` for any command, or an
// exact command; for web_fetch it is `domain:HOST` (see WebFetchTool); for
// other tools it is a doublestar path glob. Errors are
// *RuleError values matching ErrInvalidRule.
func ParseRule(s string) (Rule, error) {
	fail := func(problem string) (Rule, error) { return Rule{}, &RuleError{Rule: s, Problem: problem} }
	text := strings.TrimSpace(s)
	if text == "" {
		return fail("empty rule")
	}
	open := strings.IndexByte(text, '(')
	if open < 0 {
		if strings.ContainsRune(text, ')') {
			return fail(`unexpected ")" without "("`)
		}
		if p := checkToolName(text); p != "" {
			return fail(p)
		}
		return Rule{Text: s, Tool: canonicalTool(text), kind: ruleTool}, nil
	}
	if !strings.HasSuffix(text, ")") {
		return fail(`missing ")"`)
	}
	tool := strings.TrimSpace(text[:open])
	if p := checkToolName(tool); p != "" {
		return fail(p)
	}
	pat := strings.TrimSpace(text[open+1 : len(text)-1])
	if pat == "" {
		return fail("empty pattern (write the tool name alone to match every call)")
	}
	if strings.Contains(tool, "*") {
		return fail("a tool name with * cannot take a pattern")
	}
	r := Rule{Text: s, Tool: canonicalTool(tool), Pattern: pat}
	if r.Tool == WebFetchTool {
		if p := r.parseDomain(pat); p != "" {
			return fail(p)
		}
		return r, nil
	}
	if r.Tool == CommandTool {
		if p := r.parseCommand(pat); p != "" {
			return fail(p)
		}
		return r, nil
	}
	if strings.HasPrefix(pat, "~") && !strings.HasPrefix(pat, "~/") && pat != "~" {
		return fail("only ~/ is supported at the start of a path, not ~user")
	}
	if !doublestar.ValidatePattern(filepath.ToSlash(pat)) {
		return fail("invalid path glob " + pat)
	}
	r.kind = rulePath
	return r, nil
}

// MustParseRule is ParseRule for rules known to be valid; it panics on an
// error. Use it only with constant text.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// checkToolName returns what is wrong with a tool name, or "".
func checkToolName(name string) string {
	if name == "" {
		return "missing tool name"
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c == '.' || c == '*' || c == ':' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "tool name " + name + " has the invalid character " + string(c)
		}
	}
	return ""
}

// canonicalTool maps Claude Code tool names to mx-claw's.
func canonicalTool(name string) string {
	switch name {
	case "Bash":
		return CommandTool
	case "Read":
		return "read_file"
	case "Edit", "MultiEdit":
		return "edit_file"
	case "Write":
		return "write_file"
	case "Glob":
		return "glob"
	case "Grep":
		return "grep"
	case "LS":
		return "list_dir"
	case "WebFetch":
		return WebFetchTool
	case "WebSearch":
		return WebSearchTool
	}
	return name
}

// parseCommand fills a run_command rule; it returns a problem or "".
func (r *Rule) parseCommand(pat string) string {
	if pat == "*" {
		r.kind = ruleTool
		return ""
	}
	body, prefix := strings.CutSuffix(pat, ":*")
	if !prefix {
		body, prefix = strings.CutSuffix(pat, " *")
	}
	if prefix {
		body = strings.TrimSpace(body)
		if body == "" {
			return "empty command prefix"
		}
		words, ok, problem := literalWords(body)
		if problem != "" {
			return "command prefix: " + problem
		}
		if !ok {
			return "a command prefix must be one simple command of plain words"
		}
		r.kind, r.words = rulePrefix, words
		return ""
	}
	whole, err := canonicalLine(pat)
	if err != nil {
		return "command: " + err.Error()
	}
	r.kind, r.whole = ruleExact, whole
	if words, ok, _ := literalWords(pat); ok {
		r.words = words
	}
	return ""
}

// literalWords parses s as one simple command of literal words (leading
// NAME=value assignments included). ok is false when s is anything else;
// problem is set when s does not parse.
func literalWords(s string) (words []string, ok bool, problem string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, false, err.Error()
	}
	if len(f.Stmts) != 1 {
		return nil, false, ""
	}
	st := f.Stmts[0]
	ce, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || len(st.Redirs) > 0 || st.Negated || st.Background {
		return nil, false, ""
	}
	r := &resolver{src: s, home: "~"}
	for _, a := range ce.Assigns {
		if a.Name == nil || a.Array != nil || a.Append || a.Index != nil {
			return nil, false, ""
		}
		v := lit("")
		if a.Value != nil {
			v = r.word(a.Value)
		}
		if !v.exact {
			return nil, false, ""
		}
		words = append(words, a.Name.Value+"="+v.s)
	}
	for _, w := range ce.Args {
		v := r.word(w)
		if !v.exact {
			return nil, false, ""
		}
		words = append(words, v.s)
	}
	return words, len(words) > 0, ""
}

// canonicalLine returns a command line as the shell printer writes it, so
// that spacing and quoting style do not matter when comparing.
func canonicalLine(s string) (string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// matchTool reports whether the rule applies to tool. read_file rules also
// cover list_dir, glob and grep; edit_file rules also cover write_file and
// apply_patch.
func (r Rule) matchTool(tool string) bool {
	if strings.Contains(r.Tool, "*") {
		ok, _ := path.Match(r.Tool, tool)
		return ok
	}
	if r.Tool == tool {
		return true
	}
	switch r.Tool {
	case "read_file":
		return tool == "list_dir" || tool == "glob" || tool == "grep"
	case "edit_file":
		return tool == "write_file" || tool == "apply_patch"
	}
	return false
}

// matchPath reports whether a path rule matches the canonical path p.
func (r Rule) matchPath(p, workspace, home string) bool {
	if r.kind == ruleTool {
		return true
	}
	if r.kind != rulePath || p == "" {
		return false
	}
	pat := filepath.ToSlash(r.Pattern)
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if home == "" {
			return false
		}
		pat = escapeGlob(filepath.ToSlash(home)) + pat[1:]
	case strings.HasPrefix(pat, "/"):
	default:
		if workspace == "" {
			return false
		}
		pat = strings.TrimRight(escapeGlob(filepath.ToSlash(workspace)), "/") + "/" + strings.TrimPrefix(pat, "./")
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	ok, _ := doublestar.Match(pat, filepath.ToSlash(p))
	return ok
}

// escapeGlob escapes glob metacharacters in a literal path.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// matchPart reports whether a run_command rule matches a command part.
// loose is set for deny and ask rules, which also match the program's
// base name and ignore assignments; allow rules match the words as
// written, and only when the assignments are harmless or part of the rule.
// whole is the canonical command line, for exact whole-line rules.
func (r Rule) matchPart(p *CommandPart, whole, home string, loose bool) bool {
	switch r.kind {
	case ruleTool:
		return true
	case ruleExact:
		if r.whole != "" && r.whole == whole {
			return true
		}
	case rulePrefix:
	default:
		return false
	}
	if p.Kind != PartCommand || r.words == nil || p.nexact < 1 {
		return false
	}
	want := expandHome(r.words, home)
	exact := p.nexact == len(p.Words)
	var forms [][]string
	if len(p.Assigns) > 0 && p.assignsExact {
		forms = append(forms, append(append([]string(nil), p.Assigns...), p.Words[:p.nexact]...))
	}
	if loose || p.envOK {
		forms = append(forms, p.Words[:p.nexact])
		if loose && p.Name != "" && p.Name != p.Words[0] {
			forms = append(forms, append([]string{p.Name}, p.Words[1:p.nexact]...))
		}
	}
	for _, f := range forms {
		if r.kind == rulePrefix && hasPrefix(f, want) {
			return true
		}
		if r.kind == ruleExact && exact && equalWords(f, want) {
			return true
		}
	}
	return false
}

// expandHome expands a leading ~ in rule words.
func expandHome(words []string, home string) []string {
	if home == "" {
		return words
	}
	out := words
	for i, w := range words {
		if w == "~" || strings.HasPrefix(w, "~/") {
			if &out[0] == &words[0] {
				out = append([]string(nil), words...)
			}
			out[i] = home + w[1:]
		}
	}
	return out
}

func hasPrefix(words, prefix []string) bool {
	return len(words) >= len(prefix) && equalWords(words[:len(prefix)], prefix)
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
