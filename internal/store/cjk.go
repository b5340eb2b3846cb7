package store

import (
	"database/sql/driver"
	"fmt"
	"strings"
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
// were. Rather than bigrams, as a one-character query would otherwise need
// a prefix search over every bigram starting with it.
//
// Full-width letters, digits and punctuation (ＡＰＩ，) are indexed as
// their ASCII forms, and the ideographic space as a space.
//
// The copy is made by mx_claw_search_index, a function this package
// registers with SQLite (RegisterSearchFunction), which the triggers that
// index messages call: a program that writes the messages table without
// it fails with "no such function" rather than leaving a message out of
// the index. Snippets are cut from the message's own text (history.go).

// searchIndexFunc is the name of the SQL function that returns the text
// the index holds for a message's text (SearchIndexText).
const searchIndexFunc = "mx_claw_search_index"

func init() {
	// Every connection of the "sqlite" driver in a program that links the
	// store gets the function, so that such a program's own hand edits of
	// messages (tests, repair tools) are indexed as the store's are.
	sqlite.MustRegisterDeterministicScalarFunction(searchIndexFunc, 1, searchIndexSQL)
}

// registerSearchFunction adds mx_claw_search_index to the connections drv
// opens.
func registerSearchFunction(drv *sqlite.Driver) error {
	return drv.RegisterDeterministicScalarFunction(searchIndexFunc, 1, searchIndexSQL)
}

func searchIndexSQL(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case string:
		return SearchIndexText(v), nil
	case []byte:
		return SearchIndexText(string(v)), nil
	default:
		return nil, fmt.Errorf("%s: %T, not text", searchIndexFunc, v)
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
