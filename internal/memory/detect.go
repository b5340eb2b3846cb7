package memory

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Explicit requests to remember. After a turn the agent looks in the
// user's message — and only there: never in the model's answers nor in
// tool output, which a repository's content could fill — for sentences
// that ask mx-claw to keep something for later: "remember that …",
// "from now on …", "always …", "记住…", "以后…". Each becomes a candidate
// a person accepts or rejects; nothing reaches a prompt before that.
// Detection is deliberately narrow (a sentence must start with the
// request; questions are skipped): a missed request costs the user one
// `mx-claw memory` edit, a false one costs every review.

// Request is one explicit request to remember found in a message.
type Request struct {
	// File is the memory file it belongs in: UserFile for something
	// about the person (it speaks of "I", "my", "我"), else NotesFile.
	File string
	// Text is what to remember, as one sentence.
	Text string
	// Quote is the user's sentence it came from.
	Quote string
}

// maxRequests caps the requests taken from one message; maxQuote caps
// the sentence one is taken from.
const (
	maxRequests = 5
	maxQuote    = 500
)

var (
	fenced      = regexp.MustCompile("(?s)```.*?(```|$)")
	fileBlock   = regexp.MustCompile(`(?s)<file\b[^>]*>.*?(</file>|$)`)
	leadFillers = regexp.MustCompile(`(?i)^(?:(?:please|pls|and|also|ok|okay|oh|btw|hey|so)\b[\s,:]*)+`)
	zhFillers   = regexp.MustCompile(`^(?:请|另外|还有|也|并且|而且|麻烦|你)+[，,：:\s]*`)
	// English openings: the pattern, and whether the opening is kept in
	// the text ("Always …" reads right as a standing rule; "Remember
	// that" does not).
	enOpenings = []struct {
		re   *regexp.Regexp
		keep bool
	}{
		{regexp.MustCompile(`(?i)^(?:remember|don't forget|do not forget|keep in mind)(?:\s+that\b|\s*[:,])?\s*`), false},
		{regexp.MustCompile(`(?i)^(?:from now on|going forward|in the future|henceforth)\b[\s,:]*`), false},
		{regexp.MustCompile(`(?i)^always\b\s*`), true},
	}
	zhOpenings = []struct {
		re   *regexp.Regexp
		keep bool
	}{
		{regexp.MustCompile(`^(?:记住|记得|请记住)[：:，,\s]*`), false},
		{regexp.MustCompile(`^(?:从现在起|从现在开始|今后)[，,：:\s]*`), false},
		{regexp.MustCompile(`^以后`), true},
		{regexp.MustCompile(`^(?:总是|一律|始终)`), true},
	}
	aboutUser = regexp.MustCompile(`(?i)\b(?:i|i'm|i've|i'd|my|me|mine)\b|我`)
)

// Detect returns the explicit requests to remember in a user's message,
// at most five, in order. Code blocks, quoted lines and attached files
// (<file> blocks) are not looked at.
func Detect(message string) []Request {
	text := fenced.ReplaceAllString(message, "\n")
	text = fileBlock.ReplaceAllString(text, "\n")
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), ">") {
			lines = append(lines, l)
		}
	}
	var out []Request
	seen := make(map[string]bool)
	for _, s := range sentences(strings.Join(lines, "\n")) {
		r, ok := request(s)
		if !ok || seen[normalize(r.Text)] {
			continue
		}
		seen[normalize(r.Text)] = true
		out = append(out, r)
		if len(out) == maxRequests {
			break
		}
	}
	return out
}

// sentences splits text at line breaks, at 。！？；, and at . ! ? ; that
// are followed by a blank or the end (so "go1.26" and "e.g." stay whole
// more often than not). Each keeps its closing mark.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := -1
		switch r {
		case '\n':
			end = i
		case '。', '！', '？', '；':
			end = i + utf8.RuneLen(r)
		case '.', '!', '?', ';':
			if next := i + 1; next >= len(text) || text[next] == ' ' || text[next] == '\t' || text[next] == '\n' {
				end = i + 1
			}
		}
		if end >= 0 {
			if s := strings.TrimSpace(text[start:end]); s != "" {
				out = append(out, s)
			}
			start = end
			if r == '\n' {
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// request reads one sentence as a request to remember.
func request(sentence string) (Request, bool) {
	if len(sentence) > maxQuote || strings.HasSuffix(sentence, "?") || strings.HasSuffix(sentence, "？") {
		return Request{}, false
	}
	s := strings.TrimLeft(sentence, "-*• \t")
	s = leadFillers.ReplaceAllString(s, "")
	s = zhFillers.ReplaceAllString(s, "")
	for _, o := range enOpenings {
		if loc := o.re.FindStringIndex(s); loc != nil {
			return build(s, loc, o.keep, sentence)
		}
	}
	for _, o := range zhOpenings {
		if loc := o.re.FindStringIndex(s); loc != nil {
			return build(s, loc, o.keep, sentence)
		}
	}
	return Request{}, false
}

func build(s string, loc []int, keep bool, quote string) (Request, bool) {
	rest := strings.TrimSpace(s[loc[1]:])
	text := rest
	if keep {
		text = strings.TrimSpace(s)
	}
	// Too short to be worth keeping: "Always." "记住。"
	if letters(rest) < 2 || (!hasCJK(rest) && len(strings.Fields(rest)) < 2) {
		return Request{}, false
	}
	text = sentenceCase(text)
	file := NotesFile
	if aboutUser.MatchString(text) {
		file = UserFile
	}
	return Request{File: file, Text: text, Quote: quote}, true
}

// sentenceCase capitalises the first letter and ends the text with a
// full stop if it has no closing mark.
func sentenceCase(s string) string {
	s = strings.TrimRight(s, " ,;:，；：")
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	last, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case strings.ContainsRune(".!。！", last):
	case isCJKRune(last):
		s += "。"
	default:
		s += "."
	}
	return s
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

func hasCJK(s string) bool {
	for _, r := range s {
		if isCJKRune(r) {
			return true
		}
	}
	return false
}

func isCJKRune(r rune) bool {
	return r >= 0x2E80 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// normalize folds a text for comparison: lower case, single spaces, no
// closing mark.
func normalize(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".。!！")
}
