package mdterm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// inline renders the inline Markdown of s (emphasis, code, links) with the
// styles of stack enclosing it.
func (st *Style) inline(s string, stack []string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && isPunct(s[i+1]) {
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
		case '`':
			n := run(s, i, '`')
			if j := closingTicks(s, i+n, n); j >= 0 {
				code := strings.ReplaceAll(s[i+n:j], "\n", " ")
				if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
					code = code[1 : len(code)-1]
				}
				if st.Ticks || st.NoColor {
					code = "`" + code + "`"
				}
				b.WriteString(st.wrapIn(st.Code, code, stack))
				i = j + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case '!', '[':
			start := i
			if c == '!' {
				start++
			}
			if start < len(s) && s[start] == '[' {
				if text, url, end, ok := link(s, start); ok {
					b.WriteString(st.link(text, url, stack))
					i = end
					continue
				}
			}
		case '<':
			if j := strings.IndexByte(s[i:], '>'); j > 0 {
				u := s[i+1 : i+j]
				if isAutolink(u) {
					b.WriteString(st.wrapIn(st.URL, u, stack))
					i += j + 1
					continue
				}
			}
		case '*', '_', '~':
			if out, end, ok := st.emphasis(s, i, stack); ok {
				b.WriteString(out)
				i = end
				continue
			}
			n := run(s, i, c)
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// link renders a link as its text followed by its address.
func (st *Style) link(text, url string, stack []string) string {
	t := st.inline(text, append(stack, st.Link))
	t = st.wrapIn(st.Link, t, stack)
	if url == "" || url == text || url == "mailto:"+text || strings.TrimSpace(text) == "" {
		if strings.TrimSpace(text) == "" {
			return st.wrapIn(st.URL, url, stack)
		}
		return t
	}
	return t + " " + st.wrapIn(st.URL, "("+url+")", stack)
}

// emphasis renders the emphasis opened by the delimiter run at s[i], if it
// is closed.
func (st *Style) emphasis(s string, i int, stack []string) (string, int, bool) {
	c := s[i]
	n := run(s, i, c)
	if i+n >= len(s) || isSpace(s[i+n:]) {
		return "", 0, false
	}
	if c == '_' && i > 0 && isAlnumBefore(s[:i]) {
		return "", 0, false
	}
	if c == '~' {
		if n != 2 {
			return "", 0, false
		}
		j := closer(s, i+n, c, 2)
		if j < 0 {
			return "", 0, false
		}
		inner := s[i+2 : j]
		if st.NoColor || st.Strike == "" {
			return "~~" + st.inline(inner, stack) + "~~", j + 2, true
		}
		return st.wrapIn(st.Strike, st.inline(inner, append(stack, st.Strike)), stack), j + 2, true
	}
	var params []string
	k := n
	switch {
	case n >= 3:
		k, params = 3, []string{st.Strong, st.Emph}
	case n == 2:
		params = []string{st.Strong}
	default:
		params = []string{st.Emph}
	}
	j := closer(s, i+k, c, k)
	if j < 0 && k == 3 {
		// ***a** b* and the like: try the strong part alone.
		return "", 0, false
	}
	if j < 0 {
		return "", 0, false
	}
	inner := s[i+k : j]
	out := inner
	if k == 3 {
		out = st.inline(inner, append(stack, params[0], params[1]))
		out = st.wrapIn(params[1], out, append(stack, params[0]))
		out = st.wrapIn(params[0], out, stack)
	} else {
		out = st.wrapIn(params[0], st.inline(inner, append(stack, params[0])), stack)
	}
	return out, j + k, true
}

// closer finds the run of k delimiters c that closes an emphasis opened
// before from, skipping code spans and escapes; it returns the index of the
// k delimiters taken or -1.
func closer(s string, from int, c byte, k int) int {
	for j := from; j < len(s); {
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '`':
			n := run(s, j, '`')
			if e := closingTicks(s, j+n, n); e >= 0 {
				j = e + n
			} else {
				j += n
			}
			continue
		case c:
			m := run(s, j, c)
			before, _ := utf8.DecodeLastRuneInString(s[:j])
			after, _ := utf8.DecodeRuneInString(s[j+m:])
			ok := j > from && !unicode.IsSpace(before)
			if c == '_' && j+m < len(s) && (unicode.IsLetter(after) || unicode.IsDigit(after)) {
				ok = false
			}
			if ok && (m == k || (m > k && m >= 3)) {
				return j + m - k
			}
			j += m
			continue
		}
		j++
	}
	return -1
}

// link parses [text](url "title") at s[i], which is '['.
func link(s string, i int) (text, url string, end int, ok bool) {
	depth := 0
	j := i
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
			continue
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(s) || j+1 >= len(s) || s[j+1] != '(' {
		return "", "", 0, false
	}
	text = s[i+1 : j]
	k := j + 2
	depth = 1
	for ; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
			continue
		case '(':
			depth++
		case ')':
			depth--
		case '\n':
			return "", "", 0, false
		}
		if depth == 0 {
			break
		}
	}
	if k >= len(s) {
		return "", "", 0, false
	}
	dest := strings.TrimSpace(s[j+2 : k])
	if strings.HasPrefix(dest, "<") {
		if e := strings.IndexByte(dest, '>'); e > 0 {
			dest = dest[1:e]
		}
	} else if f := strings.IndexAny(dest, " \t"); f >= 0 {
		dest = dest[:f] // drop the title
	}
	return text, dest, k + 1, true
}

// closingTicks finds the run of exactly n backticks that closes a code
// span, or -1.
func closingTicks(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := run(s, j, '`')
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

// run counts the bytes c from s[i].
func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isPunct(c byte) bool {
	return c < 0x80 && unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0
}

func isSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func isAlnumBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isAutolink(u string) bool {
	if strings.ContainsAny(u, " \t\n<") {
		return false
	}
	for _, p := range []string{"http://", "https://", "mailto:", "ftp://"} {
		if strings.HasPrefix(u, p) && len(u) > len(p) {
			return true
		}
	}
	return false
}
