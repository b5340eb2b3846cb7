package mdterm

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// MinWidth is the narrowest width Render lays text out to; smaller widths
// are raised to it.
const MinWidth = 20

// minInner is the narrowest width given to the content of a list item or
// a quote; deeper nesting stops indenting.
const minInner = 10

// line is one output line; verbatim lines are code, kept as written even
// when wider than the width.
type line struct {
	text     string
	verbatim bool
}

// Render turns markdown into terminal text laid out to width cells: every
// line fits except those of fenced code blocks, which are kept verbatim.
// The result has no leading or trailing blank lines. The input should be
// free of escape sequences; control characters are replaced.
func Render(markdown string, width int, style Style) string {
	ls := render(markdown, width, style)
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return strings.Join(out, "\n")
}

func render(markdown string, width int, style Style) []line {
	width = max(width, MinWidth)
	markdown = strings.ReplaceAll(markdown, "\r\n", "\n")
	markdown = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return '\uFFFD'
		}
		return r
	}, markdown)
	markdown = strings.ReplaceAll(markdown, "\t", "    ")
	r := &renderer{st: &style}
	ls := r.blocks(parse(strings.Split(markdown, "\n")), width, false, 0)
	for len(ls) > 0 && ls[0].text == "" {
		ls = ls[1:]
	}
	for len(ls) > 0 && ls[len(ls)-1].text == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

type renderer struct {
	st *Style
}

// blocks renders bs to width w, separated by blank lines unless tight;
// depth is the nesting of lists.
func (r *renderer) blocks(bs []block, w int, tight bool, depth int) []line {
	var out []line
	for i, b := range bs {
		if i > 0 && !tight {
			out = append(out, line{})
		}
		out = append(out, r.block(b, w, depth)...)
	}
	return out
}

func (r *renderer) block(b block, w, depth int) []line {
	st := r.st
	switch b.kind {
	case heading:
		text := strings.Repeat("#", b.level) + " " + st.inline(b.text, []string{st.Heading})
		return r.wrap(st.wrapIn(st.Heading, text, nil), w)
	case rule:
		return []line{{text: st.wrapIn(st.Rule, strings.Repeat("─", w), nil)}}
	case code:
		return r.code(b, w)
	case quote:
		iw := w - 2
		if iw < minInner {
			iw = w // too deep to indent: no bar
		}
		inner := r.blocks(b.children, iw, false, depth)
		bar := st.wrapIn(st.Quote, "│", nil)
		for i, l := range inner {
			switch {
			case w-2 < minInner:
			case l.text == "":
				inner[i].text = bar
			default:
				inner[i].text = bar + " " + l.text
			}
		}
		return inner
	case list:
		return r.list(b, w, depth)
	case table:
		return r.table(b, w)
	}
	return r.wrap(st.inline(b.text, nil), w)
}

var bullets = []string{"•", "◦", "▪", "▫"}

func (r *renderer) list(b block, w, depth int) []line {
	markers := make([]string, len(b.items))
	mw := 0
	for i, it := range b.items {
		markers[i] = bullets[depth%len(bullets)]
		if b.ordered {
			markers[i] = it.marker
		}
		mw = max(mw, ansi.StringWidth(markers[i])+1)
	}
	var out []line
	for i, it := range b.items {
		if i > 0 && b.loose {
			out = append(out, line{})
		}
		m := markers[i]
		m = strings.Repeat(" ", mw-1-ansi.StringWidth(m)) + m
		m = r.st.wrapIn(r.st.Marker, m, nil)
		cw := w - mw
		if cw < minInner {
			// Too deep to indent: the marker goes on a line of its own.
			out = append(out, line{text: m})
			out = append(out, r.blocks(it.blocks, w, !b.loose, depth+1)...)
			continue
		}
		content := r.blocks(it.blocks, cw, !b.loose, depth+1)
		if len(content) == 0 {
			content = []line{{}}
		}
		pad := strings.Repeat(" ", mw)
		for j, l := range content {
			p := pad
			if j == 0 {
				p = m + " "
			}
			if l.text == "" && j > 0 {
				p = ""
			}
			content[j].text = strings.TrimRight(p+l.text, " ")
			if l.verbatim || j == 0 && l.text == "" {
				content[j].text = p + l.text
			}
		}
		out = append(out, content...)
	}
	return out
}

// code renders a fenced code block: a label line with the language, then
// the lines indented and highlighted, verbatim.
func (r *renderer) code(b block, w int) []line {
	st := r.st
	var out []line
	if b.lang != "" {
		out = append(out, line{text: st.wrapIn(st.Label, ansi.Truncate(b.lang, w, "…"), nil)})
	}
	wide := 0
	for _, l := range b.lines {
		wide = max(wide, ansi.StringWidth(l))
	}
	for _, l := range b.lines {
		text := "  " + highlight(st, b.lang, l)
		if st.CodeBlock != "" && !st.NoColor && wide+4 <= w {
			text += strings.Repeat(" ", wide-ansi.StringWidth(l)+2)
		}
		out = append(out, line{text: st.wrapIn(st.CodeBlock, text, nil), verbatim: true})
	}
	return out
}

// table renders a table aligned when it fits the width, else each row as
// a list of "header: value" lines.
func (r *renderer) table(b block, w int) []line {
	st := r.st
	n := len(b.rows[0])
	rows := make([][]string, len(b.rows))
	widths := make([]int, n)
	for i, row := range b.rows {
		rows[i] = make([]string, n)
		for j := range n {
			c := ""
			if j < len(row) {
				c = strings.ReplaceAll(row[j], "\n", " ")
			}
			var stack []string
			if i == 0 {
				stack = []string{st.Strong}
			}
			c = st.inline(c, stack)
			if i == 0 {
				c = st.wrapIn(st.Strong, c, nil)
			}
			rows[i][j] = c
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	total := 3 * (n - 1)
	for _, cw := range widths {
		total += cw
	}
	var out []line
	if total > w || strings.ContainsAny(strings.Join(flat(rows), ""), "\n") {
		for i, row := range rows[1:] {
			if i > 0 {
				out = append(out, line{})
			}
			for j, c := range row {
				out = append(out, r.wrap(rows[0][j]+": "+c, w)...)
			}
		}
		return out
	}
	sep := st.wrapIn(st.Table, " │ ", nil)
	for i, row := range rows {
		var b2 strings.Builder
		for j, c := range row {
			if j > 0 {
				b2.WriteString(sep)
			}
			gap := widths[j] - ansi.StringWidth(c)
			switch b.align[min(j, len(b.align)-1)] {
			case 'r':
				b2.WriteString(strings.Repeat(" ", gap) + c)
			case 'c':
				b2.WriteString(strings.Repeat(" ", gap/2) + c + strings.Repeat(" ", gap-gap/2))
			default:
				b2.WriteString(c + strings.Repeat(" ", gap))
			}
		}
		out = append(out, line{text: strings.TrimRight(b2.String(), " ")})
		if i == 0 {
			parts := make([]string, n)
			for j, cw := range widths {
				parts[j] = strings.Repeat("─", cw)
			}
			out = append(out, line{text: st.wrapIn(st.Table, strings.Join(parts, "─┼─"), nil)})
		}
	}
	return out
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// wrap word-wraps styled text to w and makes every line carry its own
// styles, so that indentation added around it stays unstyled.
func (r *renderer) wrap(s string, w int) []line {
	var ls []string
	for _, l := range strings.Split(ansi.Wrap(s, w, ""), "\n") {
		if ansi.StringWidth(l) > w {
			// Wrap can overrun the limit at a hyphen; cut such lines.
			l = ansi.Hardwrap(l, w, true)
		}
		ls = append(ls, strings.Split(l, "\n")...)
	}
	out := make([]line, len(ls))
	var active []string
	for i, l := range ls {
		l = strings.TrimRight(l, " ")
		text := strings.Join(active, "") + l
		active = sgrState(active, l)
		if len(active) > 0 {
			text += reset
		}
		out[i] = line{text: text}
	}
	return out
}

// sgrState returns the SGR sequences in effect after s, given those in
// effect before it.
func sgrState(active []string, s string) []string {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return active
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j >= len(s) {
			return active
		}
		if s[j] == 'm' {
			seq := s[i : j+1]
			if seq == reset || seq == "\x1b[m" {
				active = nil
			} else {
				active = append(active, seq)
			}
		}
		s = s[j+1:]
	}
}
