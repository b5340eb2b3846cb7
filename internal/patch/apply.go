package patch

import (
	"fmt"
	"slices"
	"strings"
)

// ApplyError reports a hunk that could not be applied to a file.
type ApplyError struct {
	// Hunk is the 1-based number of the hunk within its file operation.
	Hunk int
	// Line is the 1-based line of the patch text the hunk starts on.
	Line int
	// Msg says what was not found, and where the nearest match was.
	Msg string
}

// Error returns "hunk N (patch line L): <what went wrong>".
func (e *ApplyError) Error() string {
	return fmt.Sprintf("hunk %d (patch line %d): %s", e.Hunk, e.Line, e.Msg)
}

// text is a file split into lines for matching.
type text struct {
	lines []string // without line endings; a CRLF's CR is dropped too
	eols  []string // "\n", "\r\n", or "" for a last line without one
	eol   string   // the ending most lines have, for new lines
	noEOL bool     // the file is not empty and does not end with "\n"
}

func splitText(s string) text {
	var t text
	crlf, lf := 0, 0
	for s != "" {
		line, eol := s, ""
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
			eol = "\n"
			if l, ok := strings.CutSuffix(line, "\r"); ok {
				line, eol = l, "\r\n"
				crlf++
			} else {
				lf++
			}
		} else {
			s = ""
			t.noEOL = true
		}
		t.lines = append(t.lines, line)
		t.eols = append(t.eols, eol)
	}
	t.eol = "\n"
	if crlf > lf {
		t.eol = "\r\n"
	}
	return t
}

// replacement replaces n lines of a text from start on with lines.
type replacement struct {
	start, n int
	hunk     int // index of the hunk it comes from
	lines    []string
	eols     []string
}

// ApplyToContent applies the hunks of one "*** Update File" operation to
// the file content old and returns the new content. Hunks are applied in
// order, each searched for after the previous one (a hunk found only
// earlier in the file is accepted if it does not overlap another). Lines
// are matched as described in the package documentation. Untouched and
// context lines keep their text and line endings; new lines get the
// ending most of the file's lines have; a file without a final newline
// stays without one.
//
// A hunk with no lines to match inserts its lines after its last @@
// anchor, or at the end of the file if it has none. Errors are
// [*ApplyError]s naming the hunk and the text that was not found.
func ApplyToContent(old string, hunks []Hunk) (string, error) {
	t := splitText(old)
	var reps []replacement
	cursor := 0
	for i, h := range hunks {
		fail := func(format string, args ...any) error {
			return &ApplyError{Hunk: i + 1, Line: h.Line, Msg: fmt.Sprintf(format, args...)}
		}
		for _, c := range h.Context {
			at, ok := seek(t.lines, []string{c}, cursor, false)
			if !ok {
				return "", fail("the @@ context line %s was not found%s", quote(c), after(cursor))
			}
			cursor = at + 1
		}
		lines := h.Lines
		pat := oldLines(lines)
		var at int
		ok := false
		if len(pat) > 0 {
			at, ok = seek(t.lines, pat, cursor, h.EOF)
		}
		if !ok && len(pat) > 0 && pat[len(pat)-1] == "" {
			// A trailing empty line often stands for the file's final
			// newline; try without it, as codex does.
			lines = dropLastOld(lines)
			pat = pat[:len(pat)-1]
			if len(pat) > 0 {
				at, ok = seek(t.lines, pat, cursor, h.EOF)
			}
		}
		if len(pat) == 0 {
			// Nothing to match: insert after the anchors, or at the end.
			at := len(t.lines)
			if len(h.Context) > 0 {
				at = cursor
			}
			reps = append(reps, t.replace(at, 0, i, lines))
			continue
		}
		if !ok && cursor > 0 {
			// Hunks out of order: accept a match before the cursor if it
			// does not overlap another hunk.
			if a, found := seek(t.lines, pat, 0, h.EOF); found && !overlaps(reps, a, len(pat)) {
				at, ok = a, true
			}
		}
		if !ok {
			return "", fail("%s", notFound(t.lines, oldLines(h.Lines), cursor))
		}
		reps = append(reps, t.replace(at, len(pat), i, lines))
		cursor = at + len(pat)
	}

	slices.SortStableFunc(reps, func(a, b replacement) int { return a.start - b.start })
	for k := 1; k < len(reps); k++ {
		a, b := reps[k-1], reps[k]
		if a.start+a.n > b.start {
			h := hunks[max(a.hunk, b.hunk)]
			return "", &ApplyError{Hunk: max(a.hunk, b.hunk) + 1, Line: h.Line, Msg: fmt.Sprintf(
				"it changes lines %d–%d of the file, which hunk %d changes too",
				b.start+1, b.start+max(b.n, 1), min(a.hunk, b.hunk)+1)}
		}
	}
	return t.render(reps), nil
}

// replace builds the replacement of n lines from start on by the new side
// of a hunk's lines: context lines keep the file's text and endings, added
// lines get the file's usual ending.
func (t text) replace(start, n, hunk int, lines []Line) replacement {
	r := replacement{start: start, n: n, hunk: hunk}
	j := start
	for _, l := range lines {
		switch l.Kind {
		case LineAdded:
			r.lines = append(r.lines, l.Text)
			r.eols = append(r.eols, t.eol)
		case LineRemoved:
			j++
		default:
			if j < len(t.lines) {
				r.lines = append(r.lines, t.lines[j])
				r.eols = append(r.eols, t.eols[j])
			} else {
				r.lines = append(r.lines, l.Text)
				r.eols = append(r.eols, t.eol)
			}
			j++
		}
	}
	return r
}

// render joins the text with the replacements (sorted, not overlapping)
// made, keeping a missing final newline missing.
func (t text) render(reps []replacement) string {
	var lines, eols []string
	pos := 0
	for _, r := range reps {
		lines = append(lines, t.lines[pos:r.start]...)
		eols = append(eols, t.eols[pos:r.start]...)
		lines = append(lines, r.lines...)
		eols = append(eols, r.eols...)
		pos = r.start + r.n
	}
	lines = append(lines, t.lines[pos:]...)
	eols = append(eols, t.eols[pos:]...)

	var sb strings.Builder
	for i, l := range lines {
		eol := eols[i]
		switch {
		case i == len(lines)-1 && t.noEOL:
			eol = ""
		case eol == "":
			eol = t.eol
		}
		sb.WriteString(l)
		sb.WriteString(eol)
	}
	return sb.String()
}

// oldLines returns the lines a hunk expects: context and removed lines.
func oldLines(lines []Line) []string {
	return Hunk{Lines: lines}.Old()
}

// dropLastOld returns lines without the last context or removed line.
func dropLastOld(lines []Line) []Line {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Kind != LineAdded {
			return slices.Delete(slices.Clone(lines), i, i+1)
		}
	}
	return lines
}

// overlaps reports whether lines [start, start+n) meet a replacement.
func overlaps(reps []replacement, start, n int) bool {
	for _, r := range reps {
		if start < r.start+max(r.n, 1) && r.start < start+n {
			return true
		}
	}
	return false
}

// after describes where a search started, for error messages.
func after(cursor int) string {
	if cursor == 0 {
		return ""
	}
	return fmt.Sprintf(" after line %d (where the previous hunk or @@ line matched)", cursor)
}

// maxQuotedLines is how many lines of a hunk an error quotes.
const maxQuotedLines = 8

// notFound describes a hunk whose lines pat were not found from cursor
// on, with the nearest partial match if there is one.
func notFound(lines, pat []string, cursor int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "the lines to replace were not found%s:\n", after(cursor))
	for i, l := range pat {
		if i == maxQuotedLines {
			fmt.Fprintf(&sb, "  … (%d more lines)\n", len(pat)-i)
			break
		}
		sb.WriteString("  " + quote(l) + "\n")
	}
	best, bestAt := 0, 0
	for i := range lines {
		k := 0
		for k < len(pat) && i+k < len(lines) && strings.TrimSpace(lines[i+k]) == strings.TrimSpace(pat[k]) {
			k++
		}
		if k > best {
			best, bestAt = k, i
		}
	}
	if best == 0 {
		sb.WriteString("No line of the file matches the first of them, even ignoring indentation; read the file again and copy its lines exactly.")
		return sb.String()
	}
	switch {
	case best == len(pat):
		fmt.Fprintf(&sb, "They occur at line %d of the file, but that overlaps a change of an earlier hunk; "+
			"make each hunk change different lines, in file order.", bestAt+1)
	case bestAt+best < len(lines):
		fmt.Fprintf(&sb, "The nearest match starts at line %d of the file: its first %d line(s) match, "+
			"but then the hunk has %s where the file has %s (line %d). Read that part of the file again.",
			bestAt+1, best, quote(pat[best]), quote(lines[bestAt+best]), bestAt+best+1)
	default:
		fmt.Fprintf(&sb, "The nearest match starts at line %d of the file: its first %d line(s) match, "+
			"but then the file ends.", bestAt+1, best)
	}
	return sb.String()
}
