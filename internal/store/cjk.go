package store

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// Search in Chinese, Japanese and Korean text.
//
// Those scripts write words without spaces between them, and FTS5's
// unicode61 tokenizer (like PostgreSQL's text search parser) makes a whole
// run of their characters one token: "请修复解析器的错误" would be one word,
// and a search for 解析器 would find nothing. So the index holds a copy of
// each message's text in which every CJK character is a word of its own
// (spaces around it), and a query's CJK text becomes the phrase of its
// characters: 解析器 is the phrase "解 析 器", found inside any longer run.
// The PostgreSQL store indexes the same words (its mx_claw_search_words).
//
// Single characters rather than FTS5's trigram tokenizer: trigrams cannot
// find a query of one or two characters (most Chinese words are two), and
// a trigram index of every message, English included, is about three
// times the size of the text; single characters add one token per CJK
// character and leave English text, its stemming and ranking, as they
// were. Bigrams alone (below) would make a one-character query a prefix
// search over every bigram starting with it, and miss a character alone
// between punctuation; so the characters stay.
//
// Full-width letters, digits and punctuation (ＡＰＩ，) are indexed as
// their ASCII forms, and the ideographic space as a space.
//
// Single characters alone make a word of two or more characters a phrase
// of very common words (的, 是, 不 are in most Chinese text), slow to look
// up: 1.5 s for a four-character word on PostgreSQL. So the index also
// holds, after the text, every pair of neighbouring characters of each
// CJK run (bigrams), the runs' pairs apart by bigramSep: 请修复解析器 adds
// "请修 修复 复解 解析 析器". A query's CJK word of two or more characters
// is the phrase of its pairs ("解析 析器"), looked up by pairs far rarer
// than its characters, and found only inside one run (not across
// punctuation); a word of one character is looked up as a character
// (SearchPhrases).
//
// BenchmarkSearch (10,000 sessions of 50 messages, one in ten Chinese;
// both stores, one sitting, a shared 2-core machine), in ms a query,
// characters only → with pairs:
//
//	query             SQLite        PostgreSQL
//	一的 (2 chars)     5.7 → 1.5     71 → 21
//	的不               5.5 → 1.3     99 → 28
//	子家              10.9 → 1.7     48 → 9.0
//	过 (1 char)        3.5 → 1.1     31 → 15
//	一的是的 (4)       67 → 12      603 → 210
//	w20 的不           142 → 18      25 → 17
//	的不, a workspace  15.9 → 4.6    33 → 28
//
// English queries are as they were (within the machine's noise). The
// SQLite file of the corpus grows from 300 MB to 327 MB (9%).
//
// The copy is made by mx_claw_search_body (mx_claw_search_index, of
// migration 0012, is the text without the pairs), functions this package
// registers with SQLite (RegisterSearchFunction), which the triggers that
// index messages call: a program that writes the messages table without
// them fails with "no such function" rather than leaving a message out of
// the index. Snippets are cut from the message's own text (history.go).

// The SQL functions the triggers that index messages call: the text
// with its CJK characters apart (SearchIndexText; migration 0012), and
// that with the pairs of characters after it (SearchIndexBody; 0013).
const (
	searchIndexFunc = "mx_claw_search_index"
	searchBodyFunc  = "mx_claw_search_body"
)

// searchFuncs are the functions this package registers with SQLite.
var searchFuncs = map[string]func(string) string{
	searchIndexFunc: SearchIndexText,
	searchBodyFunc:  SearchIndexBody,
}

func init() {
	// Every connection of the "sqlite" driver in a program that links the
	// store gets the functions, so that such a program's own hand edits of
	// messages (tests, repair tools) are indexed as the store's are.
	for name, f := range searchFuncs {
		sqlite.MustRegisterDeterministicScalarFunction(name, 1, textFunc(name, f))
	}
}

// registerSearchFunction adds the search functions to the connections drv
// opens.
func registerSearchFunction(drv *sqlite.Driver) error {
	for name, f := range searchFuncs {
		if err := drv.RegisterDeterministicScalarFunction(name, 1, textFunc(name, f)); err != nil {
			return err
		}
	}
	return nil
}

// textFunc makes f, of text to text, an SQL function called name.
func textFunc(name string, f func(string) string) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
	return func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case nil:
			return nil, nil
		case string:
			return f(v), nil
		case []byte:
			return f(string(v)), nil
		default:
			return nil, fmt.Errorf("%s: %T, not text", name, v)
		}
	}
}

// IsCJK reports whether r is a character of Chinese, Japanese or Korean
// writing that the search index takes as a word of its own: Han
// ideographs (with 々〆〇), hiragana, katakana (half-width too) and
// Hangul. Punctuation of those scripts is not: it separates words.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x11FF: // Hangul Jamo
		return true
	case r >= 0x3005 && r <= 0x3007: // 々〆〇
		return true
	case r >= 0x3041 && r <= 0x3096, r >= 0x309D && r <= 0x309F: // hiragana
		return true
	case r >= 0x30A1 && r <= 0x30FA, r >= 0x30FC && r <= 0x30FF: // katakana
		return true
	case r >= 0x3131 && r <= 0x318E: // Hangul compatibility Jamo
		return true
	case r >= 0x31F0 && r <= 0x31FF: // katakana phonetic extensions
		return true
	case r >= 0x3400 && r <= 0x4DBF, r >= 0x4E00 && r <= 0x9FFF: // Han
		return true
	case r >= 0xAC00 && r <= 0xD7A3: // Hangul syllables
		return true
	case r >= 0xF900 && r <= 0xFAFF: // Han compatibility ideographs
		return true
	case r >= 0xFF66 && r <= 0xFF9F: // half-width katakana
		return true
	case r >= 0x20000 && r <= 0x323AF: // Han extensions B to H
		return true
	}
	return false
}

// foldWidth turns a full-width ASCII form (U+FF01 to U+FF5E) into its
// ASCII character and the ideographic space into a space.
func foldWidth(r rune) rune {
	switch {
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	}
	return r
}

// SearchIndexText returns the text the search index holds for text: each
// CJK character (IsCJK) set apart by spaces from what it touches, and
// full-width forms folded to ASCII. Queries go through it too, so that
// their CJK words become phrases of characters. Text of other scripts
// comes back as it is.
func SearchIndexText(text string) string {
	i := 0
	for i < len(text) && text[i] < utf8.RuneSelf {
		i++
	}
	if i == len(text) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	b.WriteString(text[:i])
	prevCJK, prevSpace := false, i == 0 || text[i-1] == ' '
	for _, r := range text[i:] {
		r = foldWidth(r)
		cjk := IsCJK(r)
		if (cjk || prevCJK) && !prevSpace && r != ' ' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prevCJK, prevSpace = cjk, r == ' '
	}
	return b.String()
}

// bigramSep is the word that goes before each CJK run's pairs of
// characters in the index (SearchIndexBody), so that a phrase of pairs is
// found only inside one run. A character of the private use area, which
// both stores' tokenizers keep as a word and queries do not hold: a
// query's pairs are of CJK characters only.
const bigramSep = "\ue010"

// SearchIndexBody returns the text the search index holds for a message's
// text: SearchIndexText's, then, for each run of two or more CJK
// characters, bigramSep and the run's overlapping pairs of characters
// ("解析器" adds " \ue010 解析 析器"). The PostgreSQL store's
// mx_claw_search_words makes the same words.
func SearchIndexBody(text string) string {
	words := SearchIndexText(text)
	if !strings.ContainsFunc(text, IsCJK) {
		return words
	}
	var b strings.Builder
	b.WriteString(words)
	for _, run := range cjkRuns(text) {
		if len(run) < 2 {
			continue
		}
		b.WriteString(" " + bigramSep + " ")
		b.WriteString(bigrams(run))
	}
	return b.String()
}

// cjkRuns returns the runs of CJK characters (IsCJK) of text.
func cjkRuns(text string) [][]rune {
	var runs [][]rune
	var run []rune
	for _, r := range text {
		if IsCJK(r) {
			run = append(run, r)
			continue
		}
		if run != nil {
			runs, run = append(runs, run), nil
		}
	}
	if run != nil {
		runs = append(runs, run)
	}
	return runs
}

// bigrams returns the overlapping pairs of run's characters, apart by
// spaces: "解析 析器" for 解析器.
func bigrams(run []rune) string {
	var b strings.Builder
	for i := 0; i+1 < len(run); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(run[i])
		b.WriteRune(run[i+1])
	}
	return b.String()
}

// SearchPhrase is one phrase the index must hold for a search term to
// match (SearchPhrases).
type SearchPhrase struct {
	// Text is the phrase: a term's text, or with Bigrams the pairs of
	// characters of one of its CJK runs, as the index holds them.
	Text string
	// Prefix makes the phrase's last word a prefix.
	Prefix bool
	// Bigrams says Text is pairs of CJK characters ("解析 析器"), to be
	// looked up as they are, not turned into the index's words.
	Bigrams bool
}

// SearchPhrases returns the phrases that a message must hold, all of
// them, to match term, as both stores look them up:
//
//   - a CJK word of two or more characters, alone in the term (with
//     punctuation, perhaps), is the phrase of its pairs of characters,
//     found only in a run of the text that holds the word;
//   - a term of one CJK character is that character;
//   - a term of several runs of CJK, or of CJK and other words, is the
//     phrase of its words as the index holds them (CJK characters one by
//     one), and the phrase of pairs of each CJK run of two or more
//     characters, which is what makes it quick to look up;
//   - any other term is the phrase of its words.
func SearchPhrases(term SearchTerm) []SearchPhrase {
	whole := SearchPhrase{Text: term.Text, Prefix: term.Prefix}
	runs := cjkRuns(term.Text)
	if len(runs) == 0 {
		return []SearchPhrase{whole}
	}
	other := strings.ContainsFunc(term.Text, func(r rune) bool {
		r = foldWidth(r)
		return !IsCJK(r) && (unicode.IsLetter(r) || unicode.IsNumber(r))
	})
	if !other && len(runs) == 1 {
		if len(runs[0]) == 1 {
			return []SearchPhrase{{Text: string(runs[0])}}
		}
		// A prefix of CJK text is no different: its last character is a
		// word the index holds whole.
		return []SearchPhrase{{Text: bigrams(runs[0]), Bigrams: true}}
	}
	out := []SearchPhrase{whole}
	for _, run := range runs {
		if len(run) > 1 {
			out = append(out, SearchPhrase{Text: bigrams(run), Bigrams: true})
		}
	}
	return out
}
