package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetTerms returns the words of a search query as the index holds
// them (SearchIndexText: each CJK character a word, full-width forms
// folded), lower-cased and cut to a stem (see stem), for snippet to find.
func snippetTerms(query string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(SearchIndexText(query)), isWordSep) {
		if w = stem(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// isWordSep reports the runes between words, as the index's tokenizer
// (unicode61) splits text: anything but letters and digits.
func isWordSep(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// stem cuts common English endings, so that a word of the text matches a
// query word it stems alike with in the index ("tests", "testing" and
// "tested" all start with "test"). It is the index's porter stemmer made
// rough: snippet only uses it to find where to cut and what to mark.
func stem(w string) string {
	for _, suffix := range []string{"ing", "ed", "es", "s", "ly"} {
		if len(w) > len(suffix)+2 && strings.HasSuffix(w, suffix) {
			return w[:len(w)-len(suffix)]
		}
	}
	return w
}

// snippet returns about n words of text around the first word matching a
// term, matching words between ** marks (one pair around matching words
// that touch, as the characters of a CJK word do), on one line, with …
// where text was cut. A CJK character is a word of its own, as in the
// index.
func snippet(text string, terms []string, n int) string {
	type word struct{ start, end int }
	var words []word
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if isWordSep(r) {
			i += size
			continue
		}
		j := i + size
		for !IsCJK(r) && j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if isWordSep(r) || IsCJK(r) {
				break
			}
			j += size
		}
		words = append(words, word{i, j})
		i = j
	}
	if len(words) == 0 {
		return ""
	}
	matches := func(w word) bool {
		lw := strings.ToLower(SearchIndexText(text[w.start:w.end]))
		for _, t := range terms {
			if strings.HasPrefix(lw, t) {
				return true
			}
		}
		return false
	}
	first := 0
	for i, w := range words {
		if matches(w) {
			first = i
			break
		}
	}
	from := max(first-n/3, 0)
	to := min(from+n, len(words))
	from = max(to-n, 0)
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	pos := words[from].start
	marked := false
	for _, w := range words[from:to] {
		m := matches(w)
		if marked && (!m || pos != w.start) {
			b.WriteString("**")
			marked = false
		}
		b.WriteString(OneLine(text[pos:w.start]))
		if m && !marked {
			b.WriteString("**")
			marked = true
		}
		b.WriteString(text[w.start:w.end])
		pos = w.end
	}
	if marked {
		b.WriteString("**")
	}
	if to < len(words) {
		b.WriteString("…")
	}
	return b.String()
}

// OneLine puts a snippet on one line: each run of white space with a line
// break or tab becomes a space.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
