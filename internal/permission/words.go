package permission

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word after quote removal and the expansions that can be
// done without running anything (~, $HOME, $PWD).
type word struct {
	// s is the value; for an unresolved word, its text as written.
	s string
	// exact reports that s is the value the shell will use: no expansion
	// that cannot be resolved statically ($x, $(…), brace expansion, …).
	exact bool
	// glob reports unquoted glob characters (*, ?, [).
	glob bool
	// guess is the value with $IFS read as a space and a lone brace list
	// {a,b} as "a b"; other unresolved expansions are "\x00". It is used
	// only to spot catastrophic commands.
	guess string
	// input marks the placeholder for arguments xargs reads from its
	// input.
	input bool
}

// lit returns an exact word with value s.
func lit(s string) word { return word{s: s, exact: true, guess: s} }

// values returns the values of ws.
func values(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.s
	}
	return out
}

// allExact reports whether every word is exact.
func allExact(ws []word) bool {
	for _, w := range ws {
		if !w.exact {
			return false
		}
	}
	return true
}

// resolver resolves words of one source text.
type resolver struct {
	src  string // the text the nodes were parsed from
	home string // never empty (see classifier)
	cwd  string // "" when unknown
}

// text returns the source text of node n.
func (r *resolver) text(n syntax.Node) string {
	if n == nil {
		return ""
	}
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(r.src) || start > end {
		return ""
	}
	return r.src[start:end]
}

// words resolves ws.
func (r *resolver) words(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		out = append(out, r.word(w))
	}
	return out
}

// word resolves w.
func (r *resolver) word(w *syntax.Word) word {
	if w == nil || len(w.Parts) == 0 {
		return lit("")
	}
	var b, g strings.Builder
	v := word{exact: true}
	unresolved := func() { v.exact = false }
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			val := p.Value
			if i == 0 && strings.HasPrefix(val, "~") {
				rest, ok := r.tilde(val)
				if !ok {
					unresolved()
					g.WriteString("\x00")
				}
				val = rest
			}
			s, glob, brace := unescapeUnquoted(val)
			v.glob = v.glob || glob
			b.WriteString(s)
			if brace {
				unresolved()
				if len(w.Parts) == 1 && strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") &&
					strings.Count(s, "{") == 1 && strings.Count(s, "}") == 1 {
					g.WriteString(strings.ReplaceAll(s[1:len(s)-1], ",", " "))
				} else {
					g.WriteString("\x00")
				}
				continue
			}
			g.WriteString(s)
		case *syntax.SglQuoted:
			s := p.Value
			if p.Dollar {
				var ok bool
				if s, ok = ansiC(s); !ok {
					unresolved()
				}
			}
			b.WriteString(s)
			g.WriteString(s)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				switch q := dp.(type) {
				case *syntax.Lit:
					s := unescapeDouble(q.Value)
					b.WriteString(s)
					g.WriteString(s)
				case *syntax.ParamExp:
					s, guess, ok := r.param(q)
					if !ok {
						unresolved()
					}
					b.WriteString(s)
					g.WriteString(guess)
				default:
					unresolved()
					g.WriteString("\x00")
				}
			}
		case *syntax.ParamExp:
			s, guess, ok := r.param(p)
			if !ok {
				unresolved()
			}
			b.WriteString(s)
			g.WriteString(guess)
		case *syntax.ExtGlob:
			v.glob = true
			b.WriteString(r.text(p))
			g.WriteString(r.text(p))
		default: // command and process substitution, arithmetic
			unresolved()
			g.WriteString("\x00")
		}
	}
	v.guess = g.String()
	if v.exact {
		v.s = b.String()
	} else {
		v.s = r.text(w)
	}
	return v
}

// tilde expands a leading ~ or ~/ in an unquoted literal. ~user and other
// forms are not resolved.
func (r *resolver) tilde(val string) (string, bool) {
	head, rest, hasSlash := strings.Cut(val, "/")
	if hasSlash {
		rest = "/" + rest
	}
	switch head {
	case "~":
		return escapeForUnquote(r.home) + rest, true
	case "~+":
		if r.cwd != "" {
			return escapeForUnquote(r.cwd) + rest, true
		}
	}
	return val, false
}

// escapeForUnquote protects s from unescapeUnquoted, which runs after
// tilde expansion.
func escapeForUnquote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\*?[{`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// param resolves a parameter expansion: only plain $HOME, $PWD and $IFS
// (guessed as a space) are known. It returns the value, the guess and
// whether the value is known.
func (r *resolver) param(p *syntax.ParamExp) (val, guess string, ok bool) {
	plain := p.Param != nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil &&
		p.Names == 0 && p.NestedParam == nil && len(p.Modifiers) == 0 && p.Flags == nil
	if !plain {
		return "", "\x00", false
	}
	switch p.Param.Value {
	case "HOME":
		return r.home, r.home, true
	case "PWD":
		if r.cwd != "" {
			return r.cwd, r.cwd, true
		}
	case "IFS":
		return "", " ", false
	}
	return "", "\x00", false
}

// unescapeUnquoted removes backslash quoting from an unquoted literal and
// reports unquoted glob characters and brace expansion.
func unescapeUnquoted(s string) (out string, glob, brace bool) {
	if !strings.ContainsAny(s, "\\*?[{") {
		return s, false, false
	}
	var b strings.Builder
	open := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
			}
			continue
		case c == '*' || c == '?':
			glob = true
		case c == '[':
			glob = glob || strings.IndexByte(s[i+1:], ']') >= 0
		case c == '{':
			open = true
		case open && (c == ',' || (c == '.' && i+1 < len(s) && s[i+1] == '.')):
			if strings.IndexByte(s[i:], '}') >= 0 {
				brace = true
			}
		}
		b.WriteByte(c)
	}
	return b.String(), glob, brace
}

// unescapeDouble removes the backslashes that quote $ ` " \ and newline
// inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string. It reports false for escapes it
// does not know.
func ansiC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			limit := 2
			if e == 'u' {
				limit = 4
			} else if e == 'U' {
				limit = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < limit && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:j], 16, 32)
			if err != nil {
				return "", false
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			return "", false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// quoteWord quotes s for display and for rules, only when needed.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`|&;()<>*?[]{}~#!") {
		return s
	}
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return strconv.Quote(s)
	}
	return q
}

// joinWords joins values as a shell command line.
func joinWords(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quoteWord(s)
		if i == 0 && q[i] == s && strings.Contains(s, "=") {
			q[i] = "'" + s + "'" // would read as an assignment
		}
	}
	return strings.Join(q, " ")
}

// absPath makes p absolute against cwd and cleans it. It reports false if
// p is relative and cwd unknown.
func absPath(cwd, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return "", false
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), true
}

// within reports whether p is base or beneath it. Both must be clean and
// absolute.
func within(base, p string) bool {
	if base == "" || p == "" {
		return false
	}
	rel, err := filepath.Rel(base, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
