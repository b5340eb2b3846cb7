package mdterm

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// lang describes how to highlight a language: its keywords, its line
// comment and its quotes.
type lang struct {
	keywords map[string]bool
	comment  string
	quotes   string
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// languages maps the labels of fenced code blocks to what to highlight;
// it is built on first use.
var languages = sync.OnceValue(func() map[string]*lang {
	goLang := &lang{words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"), "//", "\"'`"}
	pyLang := &lang{words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self"), "#", "\"'"}
	jsLang := &lang{words("async await break case catch class const continue default delete do else export extends finally for from function if import in instanceof interface let new of return static switch this throw try type typeof var void while yield null undefined true false"), "//", "\"'`"}
	shLang := &lang{words("if then else elif fi for while until do done case esac function in return export local set unset echo cd exit"), "#", "\"'"}
	jsonLn := &lang{words("true false null"), "", "\""}
	return map[string]*lang{
		"go": goLang, "golang": goLang,
		"python": pyLang, "py": pyLang,
		"js": jsLang, "javascript": jsLang, "ts": jsLang, "typescript": jsLang, "jsx": jsLang, "tsx": jsLang,
		"sh": shLang, "bash": shLang, "shell": shLang, "zsh": shLang, "console": shLang,
		"json": jsonLn, "jsonc": jsonLn,
	}
})

// highlight colours the keywords, strings, comments and numbers of one line
// of code; each line is highlighted on its own.
func highlight(st *Style, name, l string) string {
	lg := languages()[strings.ToLower(name)]
	if lg == nil || st.NoColor {
		return l
	}
	outer := []string{st.CodeBlock}
	var b strings.Builder
	for i := 0; i < len(l); {
		c := l[i]
		switch {
		case lg.comment != "" && strings.HasPrefix(l[i:], lg.comment) && (lg.comment != "#" || i == 0 || l[i-1] == ' '):
			b.WriteString(st.wrapIn(st.Comment, l[i:], outer))
			return b.String()
		case strings.IndexByte(lg.quotes, c) >= 0:
			j := i + 1
			for j < len(l) && l[j] != c {
				if l[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(l))
			b.WriteString(st.wrapIn(st.String, l[i:j], outer))
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && (isWord(l[j]) || l[j] == '.') {
				j++
			}
			b.WriteString(st.wrapIn(st.Number, l[i:j], outer))
			i = j
		case isWord(c):
			j := i
			for j < len(l) && isWord(l[j]) {
				j++
			}
			if lg.keywords[l[i:j]] {
				b.WriteString(st.wrapIn(st.Keyword, l[i:j], outer))
			} else {
				b.WriteString(l[i:j])
			}
			i = j
		default:
			_, n := utf8.DecodeRuneInString(l[i:])
			b.WriteString(l[i : i+n])
			i += n
		}
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}
