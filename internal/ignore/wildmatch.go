package ignore

import "strings"

// glob is one compiled glob of an ignore pattern, matched the way git's
// wildmatch matches with WM_PATHNAME: "*" and "?" and bracket expressions
// never match "/", a "**" that is not a whole path component matches
// anything, "/" included, and a backslash takes the next byte literally.
// Matching is by bytes, as in git.
type glob struct {
	toks    []token
	bad     bool // malformed (an unclosed "[", a trailing "\"): matches nothing
	literal bool // only literal bytes: a plain comparison
}

type tokenKind uint8

const (
	tokByte  tokenKind = iota // one literal byte
	tokAny                    // "?": any byte but "/"
	tokClass                  // "[...]": a byte of the set (never "/")
	tokStar                   // "*": any run of bytes without "/"
	tokStars                  // "**" inside a component: any run of bytes
)

type token struct {
	kind tokenKind
	b    byte
	set  *[256]bool // tokClass: the bytes it matches
}

// compileGlob compiles s, a glob for one or more path components.
func compileGlob(s string) glob {
	var g glob
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 == len(s) {
				g.bad = true
				return g
			}
			i++
			g.toks = append(g.toks, token{kind: tokByte, b: s[i]})
		case '?':
			g.toks = append(g.toks, token{kind: tokAny})
		case '*':
			if i+1 < len(s) && s[i+1] == '*' {
				for i+1 < len(s) && s[i+1] == '*' {
					i++
				}
				g.toks = append(g.toks, token{kind: tokStars})
			} else {
				g.toks = append(g.toks, token{kind: tokStar})
			}
		case '[':
			set, n, ok := parseClass(s[i:])
			if !ok {
				g.bad = true
				return g
			}
			g.toks = append(g.toks, token{kind: tokClass, set: set})
			i += n - 1
		default:
			g.toks = append(g.toks, token{kind: tokByte, b: c})
		}
	}
	g.literal = true
	for _, t := range g.toks {
		g.literal = g.literal && t.kind == tokByte
	}
	return g
}

// literalIs reports whether text is the literal glob's bytes.
func (g glob) literalIs(text string) bool {
	for i, t := range g.toks {
		if text[i] != t.b {
			return false
		}
	}
	return true
}

// parseClass parses the bracket expression at the start of s and returns
// its set and length; ok is false if it is not closed.
func parseClass(s string) (set *[256]bool, n int, ok bool) {
	set = new([256]bool)
	i := 1
	negate := false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		negate = true
		i++
	}
	first := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && !first:
			if negate {
				for b := range set {
					set[b] = !set[b]
				}
			}
			set['/'] = false
			return set, i + 1, true
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.Index(s[i+2:], ":]")
			if end < 0 {
				return nil, 0, false
			}
			if !addPOSIXClass(set, s[i+2:i+2+end]) {
				return nil, 0, false
			}
			i += 2 + end + 2
		default:
			if c == '\\' {
				if i+1 == len(s) {
					return nil, 0, false
				}
				i++
				c = s[i]
			}
			hi := c
			if i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
				hi = s[i+2]
				if hi == '\\' {
					if i+3 == len(s) {
						return nil, 0, false
					}
					hi = s[i+3]
					i++
				}
				i += 2
			}
			for b := int(c); b <= int(hi); b++ {
				set[b] = true
			}
			i++
		}
		first = false
	}
	return nil, 0, false
}

// addPOSIXClass adds the bytes of "[:name:]" to set; false for an unknown
// name, which makes the whole pattern match nothing, as in git.
func addPOSIXClass(set *[256]bool, name string) bool {
	var in func(b byte) bool
	switch name {
	case "alnum":
		in = func(b byte) bool { return isAlpha(b) || isDigit(b) }
	case "alpha":
		in = isAlpha
	case "blank":
		in = func(b byte) bool { return b == ' ' || b == '\t' }
	case "cntrl":
		in = func(b byte) bool { return b < 0x20 || b == 0x7f }
	case "digit":
		in = isDigit
	case "graph":
		in = func(b byte) bool { return b > 0x20 && b < 0x7f }
	case "lower":
		in = func(b byte) bool { return b >= 'a' && b <= 'z' }
	case "print":
		in = func(b byte) bool { return b >= 0x20 && b < 0x7f }
	case "punct":
		in = func(b byte) bool { return b > 0x20 && b < 0x7f && !isAlpha(b) && !isDigit(b) }
	case "space":
		in = func(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }
	case "upper":
		in = func(b byte) bool { return b >= 'A' && b <= 'Z' }
	case "xdigit":
		in = func(b byte) bool { return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f') }
	default:
		return false
	}
	for b := range 256 {
		if in(byte(b)) {
			set[b] = true
		}
	}
	return true
}

func isAlpha(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }
func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// crossesSlash reports whether g can match text with a "/" in it.
func (g glob) crossesSlash() bool {
	for _, t := range g.toks {
		if t.kind == tokStars {
			return true
		}
	}
	return false
}

// match reports whether g matches all of text. It keeps the set of text
// positions the tokens so far can reach, so any pattern costs tokens ×
// bytes at most: patterns come from the repository, which may be hostile.
func (g glob) match(text string) bool {
	if g.bad {
		return false
	}
	if g.literal {
		return len(text) == len(g.toks) && g.literalIs(text)
	}
	var buf [2][64]bool // most names fit: no allocation
	reach, next := buf[0][:], buf[1][:]
	if len(text)+1 <= len(buf[0]) {
		reach, next = reach[:len(text)+1], next[:len(text)+1]
	} else {
		reach, next = make([]bool, len(text)+1), make([]bool, len(text)+1)
	}
	reach[0] = true
	for _, t := range g.toks {
		clear(next)
		some := false
		switch t.kind {
		case tokStar, tokStars:
			run := false
			for j := range reach {
				if t.kind == tokStar && j > 0 && text[j-1] == '/' {
					run = false // "*" stops at a slash
				}
				run = run || reach[j]
				next[j] = run
				some = some || run
			}
		default:
			for j := 0; j < len(text); j++ {
				if reach[j] && t.matches(text[j]) {
					next[j+1] = true
					some = true
				}
			}
		}
		if !some {
			return false
		}
		reach, next = next, reach
	}
	return reach[len(text)]
}

// matches reports whether a one-byte token matches c.
func (t token) matches(c byte) bool {
	switch t.kind {
	case tokByte:
		return c == t.b
	case tokAny:
		return c != '/'
	case tokClass:
		return t.set[c]
	}
	return false
}
