package patch

import (
	"strings"
	"unicode"
)

// seek finds pat in lines at or after start and returns where it begins.
// It tries, in order of decreasing strictness, exact equality, equality
// ignoring trailing whitespace, ignoring leading and trailing whitespace,
// and ignoring whitespace at both ends with typographic punctuation folded
// to ASCII; the first level that matches anywhere wins. With eof set the
// pattern is first tried at the very end of the file. An empty pattern
// matches at start.
func seek(lines, pat []string, start int, eof bool) (int, bool) {
	if len(pat) == 0 {
		return min(max(start, 0), len(lines)), true
	}
	if len(pat) > len(lines) {
		return 0, false
	}
	last := len(lines) - len(pat)
	start = max(start, 0)
	for _, eq := range equalities {
		if eof && matchAt(lines, pat, last, eq) {
			return last, true
		}
		for i := start; i <= last; i++ {
			if matchAt(lines, pat, i, eq) {
				return i, true
			}
		}
	}
	return 0, false
}

// equalities are the line comparisons seek tries, strictest first.
var equalities = []func(a, b string) bool{
	func(a, b string) bool { return a == b },
	func(a, b string) bool {
		return strings.TrimRightFunc(a, unicode.IsSpace) == strings.TrimRightFunc(b, unicode.IsSpace)
	},
	func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
	func(a, b string) bool { return normalize(a) == normalize(b) },
}

func matchAt(lines, pat []string, i int, eq func(a, b string) bool) bool {
	for k, p := range pat {
		if !eq(lines[i+k], p) {
			return false
		}
	}
	return true
}

// normalize trims s and folds typographic dashes, quotes and spaces to
// their ASCII look-alikes, which models tend to write.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			return '-'
		case '\u2018', '\u2019', '\u201A', '\u201B':
			return '\''
		case '\u201C', '\u201D', '\u201E', '\u201F':
			return '"'
		case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
			'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}
