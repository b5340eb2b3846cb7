package mdterm

import (
	"regexp"
	"strings"
	"sync"
)

type kind int

const (
	para kind = iota
	heading
	code
	quote
	list
	table
	rule
)

// block is one block of a document.
type block struct {
	kind     kind
	level    int      // heading level
	text     string   // paragraph and heading inline text
	lang     string   // code language
	lines    []string // code lines
	children []block  // quote content
	items    []item   // list items
	ordered  bool
	loose    bool
	rows     [][]string // table rows, the header first
	align    []byte     // table column alignment: 'l', 'c' or 'r'
}

// item is one list item.
type item struct {
	marker string
	blocks []block
}

// The patterns of the block syntax, compiled on first use so that
// importing the package costs nothing at start-up.
var (
	fenceRe   = lazy("^( {0,3})(`{3,}|~{3,})[ \t]*([^ \t`]*)")
	headingRe = lazy(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	ruleRe    = lazy(`^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$`)
	quoteRe   = lazy(`^ {0,3}> ?`)
	itemRe    = lazy(`^( *)([-*+]|[0-9]{1,9}[.)])( +|$)`)
	delimRe   = lazy(`^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$`)
	setextRe  = lazy(`^ {0,3}(=+|-+)[ \t]*$`)
)

func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// parse splits lines into blocks.
func parse(lines []string) []block {
	out, _ := parseStarts(lines)
	return out
}

// parseStarts splits lines into blocks and returns, for each, the index of
// the line it starts on.
func parseStarts(lines []string) ([]block, []int) {
	var out []block
	var starts []int
	for i := 0; i < len(lines); {
		l := lines[i]
		start, before := i, len(out)
		switch {
		case blank(l):
			i++
		case fenceRe().MatchString(l):
			b, n := parseFence(lines[i:])
			out = append(out, b)
			i += n
		case headingRe().MatchString(l):
			m := headingRe().FindStringSubmatch(l)
			out = append(out, block{kind: heading, level: len(m[1]), text: strings.TrimSpace(m[2])})
			i++
		case ruleRe().MatchString(l):
			out = append(out, block{kind: rule})
			i++
		case quoteRe().MatchString(l):
			var inner []string
			for i < len(lines) {
				l := lines[i]
				if quoteRe().MatchString(l) {
					inner = append(inner, quoteRe().ReplaceAllString(l, ""))
				} else if !blank(l) && len(inner) > 0 && !blank(inner[len(inner)-1]) && !startsBlock(l) {
					inner = append(inner, l) // lazy continuation
				} else {
					break
				}
				i++
			}
			out = append(out, block{kind: quote, children: parse(inner)})
		case itemRe().MatchString(l):
			b, n := parseList(lines[i:])
			out = append(out, b)
			i += n
		case isTable(lines[i:]):
			b, n := parseTable(lines[i:])
			out = append(out, b)
			i += n
		default:
			var text []string
			for i < len(lines) {
				l := lines[i]
				if len(text) > 0 && setextRe().MatchString(l) {
					level := 1
					if strings.Contains(l, "-") {
						level = 2
					}
					out = append(out, block{kind: heading, level: level, text: join(text)})
					text = nil
					i++
					break
				}
				if blank(l) || (len(text) > 0 && (startsBlock(l) || isTable(lines[i:]))) {
					break
				}
				text = append(text, l)
				i++
			}
			if len(text) > 0 {
				out = append(out, block{kind: para, text: join(text)})
			}
		}
		if len(out) > before {
			starts = append(starts, start)
		}
	}
	return out, starts
}

// join joins the lines of a paragraph, keeping hard line breaks.
func join(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		hard := strings.HasSuffix(l, "  ") || strings.HasSuffix(l, "\\")
		l = strings.TrimSpace(l)
		if hard {
			l = strings.TrimSuffix(l, "\\")
		}
		b.WriteString(l)
		if i < len(lines)-1 {
			if hard {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
	}
	return b.String()
}

// startsBlock reports whether l starts a block that interrupts a paragraph.
func startsBlock(l string) bool {
	return fenceRe().MatchString(l) || headingRe().MatchString(l) || ruleRe().MatchString(l) ||
		quoteRe().MatchString(l) || itemRe().MatchString(l) && !blank(itemRe().ReplaceAllString(l, ""))
}

func blank(l string) bool { return strings.TrimSpace(l) == "" }

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// parseFence parses a fenced code block; an unclosed one runs to the end.
func parseFence(lines []string) (block, int) {
	m := fenceRe().FindStringSubmatch(lines[0])
	ind, fence := len(m[1]), m[2]
	b := block{kind: code, lang: m[3]}
	i := 1
	for ; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		if indent(l) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			i++
			break
		}
		l = l[min(ind, indent(l)):]
		b.lines = append(b.lines, l)
	}
	return b, i
}

// parseList parses a list whose first item starts lines[0].
func parseList(lines []string) (block, int) {
	first := itemRe().FindStringSubmatch(lines[0])
	b := block{kind: list, ordered: isOrdered(first[2])}
	i := 0
	for i < len(lines) {
		m := itemRe().FindStringSubmatch(lines[i])
		if m == nil || isOrdered(m[2]) != b.ordered || len(m[1]) > len(first[1]) {
			break
		}
		ind := len(m[1])
		content := len(m[0])
		if len(m[3]) > 4 {
			content = len(m[1]) + len(m[2]) + 1
		}
		body := []string{lines[i][min(content, len(lines[i])):]}
		if len(m[3]) == 0 {
			body[0] = ""
		}
		i++
		for i < len(lines) {
			l := lines[i]
			if blank(l) {
				j := i
				for j < len(lines) && blank(lines[j]) {
					j++
				}
				if j < len(lines) && indent(lines[j]) > ind {
					for ; i < j; i++ {
						body = append(body, "")
					}
					continue
				}
				break
			}
			if indent(l) > ind {
				body = append(body, l[min(indent(l), content):])
				i++
				continue
			}
			if startsBlock(l) || blank(body[len(body)-1]) {
				break
			}
			body = append(body, l) // lazy continuation
			i++
		}
		for len(body) > 0 && blank(body[len(body)-1]) {
			body = body[:len(body)-1]
		}
		for _, l := range body {
			if blank(l) {
				b.loose = true
			}
		}
		b.items = append(b.items, item{marker: m[2], blocks: parse(body)})
		// A blank line between items makes the list loose.
		j := i
		for j < len(lines) && blank(lines[j]) {
			j++
		}
		if j > i && j < len(lines) {
			if m := itemRe().FindStringSubmatch(lines[j]); m != nil && isOrdered(m[2]) == b.ordered && len(m[1]) <= len(first[1]) {
				b.loose = true
				i = j
			}
		}
	}
	if i == 0 {
		i = 1
	}
	return b, i
}

func isOrdered(marker string) bool { return marker[0] >= '0' && marker[0] <= '9' }

// isTable reports whether lines start with a table: a row and a delimiter
// row with as many cells.
func isTable(lines []string) bool {
	if len(lines) < 2 || !strings.Contains(lines[0], "|") || !delimRe().MatchString(lines[1]) || !strings.Contains(lines[1], "-") {
		return false
	}
	return len(cells(lines[0])) == len(cells(lines[1]))
}

func parseTable(lines []string) (block, int) {
	b := block{kind: table}
	for _, c := range cells(lines[1]) {
		a := byte('l')
		switch {
		case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
			a = 'c'
		case strings.HasSuffix(c, ":"):
			a = 'r'
		}
		b.align = append(b.align, a)
	}
	b.rows = append(b.rows, cells(lines[0]))
	i := 2
	for ; i < len(lines) && !blank(lines[i]) && strings.Contains(lines[i], "|"); i++ {
		b.rows = append(b.rows, cells(lines[i]))
	}
	return b, i
}

// cells splits a table row at its unescaped pipes outside code spans.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	ticks := 0
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
			continue
		case c == '`':
			n := run(row, i, '`')
			if ticks == 0 {
				ticks = n
			} else if ticks == n {
				ticks = 0
			}
			cur.WriteString(row[i : i+n])
			i += n - 1
			continue
		case c == '|' && ticks == 0:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	return append(out, strings.TrimSpace(cur.String()))
}
