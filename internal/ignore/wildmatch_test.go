package ignore

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob, text string
		want       bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/main.go", false}, // "*" stops at "/"
		{"a**z", "a/b/z", true},      // "**" inside a component does not
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"[abc]x", "bx", true},
		{"[!abc]x", "bx", false},
		{"[^abc]x", "dx", true},
		{"[!a]", "/", false}, // a bracket expression never matches "/"
		{"[]a]", "]", true},
		{"[a-c]", "b", true},
		{"[a-]", "-", true},
		{"[[:digit:]]", "7", true},
		{"[[:digit:]]", "x", false},
		{"[[:bogus:]]", "x", false},
		{"[abc", "a", false}, // unclosed: matches nothing
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\`, "a", false}, // trailing backslash: matches nothing
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
	}
	for _, tt := range tests {
		if got := compileGlob(tt.glob).match(tt.text); got != tt.want {
			t.Errorf("glob %q on %q = %v, want %v", tt.glob, tt.text, got, tt.want)
		}
	}
}

// TestHostileGlobIsFast: a glob of many stars against a long name is
// judged in time proportional to their sizes (backtracking would take
// exponential time).
func TestHostileGlobIsFast(t *testing.T) {
	t.Parallel()
	g := compileGlob(strings.Repeat("*a", 30) + "b")
	if g.match(strings.Repeat("a", 5000)) {
		t.Fatal("matched")
	}
}

// matchSlow is the backtracking definition glob.match implements.
func matchSlow(toks []token, text string) bool {
	if len(toks) == 0 {
		return text == ""
	}
	switch t := toks[0]; t.kind {
	case tokStar, tokStars:
		for i := 0; i <= len(text); i++ {
			if matchSlow(toks[1:], text[i:]) {
				return true
			}
			if i < len(text) && t.kind == tokStar && text[i] == '/' {
				return false
			}
		}
		return false
	default:
		return text != "" && t.matches(text[0]) && matchSlow(toks[1:], text[1:])
	}
}

// FuzzGlob compiles any glob and matches it against any text: no panic,
// and the same answer as the backtracking definition.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"*.go", "a**z", "[!a]?", "[[:alpha:]]*", `\[x`, "[]-]", "a/*/b"} {
		f.Add(s, "a/b.go")
	}
	f.Fuzz(func(t *testing.T, glob, text string) {
		g := compileGlob(glob)
		if len(g.toks) > 10 || len(text) > 24 {
			return
		}
		got := g.match(text)
		if want := !g.bad && matchSlow(g.toks, text); got != want {
			t.Fatalf("glob %q on %q = %v, the backtracking definition says %v", glob, text, got, want)
		}
	})
}
