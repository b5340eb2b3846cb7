package ignore

import (
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	t.Parallel()
	type want struct {
		segs                      []string
		negate, dirOnly, anchored bool
	}
	tests := []struct {
		line string
		ok   bool
		want want
	}{
		{"", false, want{}},
		{"   ", false, want{}},
		{"# comment", false, want{}},
		{"!", false, want{}},
		{"/", false, want{}},
		{"*.log", true, want{segs: []string{"*.log"}}},
		{"!keep.log", true, want{segs: []string{"keep.log"}, negate: true}},
		{"build/", true, want{segs: []string{"build"}, dirOnly: true}},
		{"/root.txt", true, want{segs: []string{"root.txt"}, anchored: true}},
		{"a/b", true, want{segs: []string{"a", "b"}, anchored: true}},
		{"a/**/b/", true, want{segs: []string{"a", "**", "b"}, anchored: true, dirOnly: true}},
		{"**/**/c", true, want{segs: []string{"**", "c"}, anchored: true}},
		{"a//b", true, want{segs: []string{"a", "", "b"}, anchored: true}},
		{"[!a]*.txt", true, want{segs: []string{"[!a]*.txt"}}},
		{`\[!a]`, true, want{segs: []string{`\[!a]`}}},
		{`\#hash`, true, want{segs: []string{`\#hash`}}},
		{`\!bang`, true, want{segs: []string{`\!bang`}}},
		{"spaced   ", true, want{segs: []string{"spaced"}}},
		{`trail\ `, true, want{segs: []string{`trail\ `}}},
		{`trail\\ `, true, want{segs: []string{`trail\\`}}},
	}
	for _, tt := range tests {
		got, ok := parsePattern(tt.line, nil)
		var texts []string
		for _, sg := range got.segs {
			texts = append(texts, sg.text)
		}
		if ok != tt.ok || (ok && (strings.Join(texts, "|") != strings.Join(tt.want.segs, "|") ||
			got.negate != tt.want.negate || got.dirOnly != tt.want.dirOnly || got.anchored != tt.want.anchored)) {
			t.Errorf("parsePattern(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// matchSegsSlow is the plain recursive definition matchSegs implements.
func matchSegsSlow(segs []segment, parts []string) bool {
	if len(segs) == 0 {
		return len(parts) == 0
	}
	s := segs[0]
	switch {
	case s.dirs && len(segs) == 1:
		return len(parts) > 0
	case s.dirs:
		for i := 0; i <= len(parts); i++ {
			if matchSegsSlow(segs[1:], parts[i:]) {
				return true
			}
		}
		return false
	case s.spans:
		for k := 1; k <= len(parts); k++ {
			if s.g.match(strings.Join(parts[:k], "/")) && matchSegsSlow(segs[1:], parts[k:]) {
				return true
			}
		}
		return false
	}
	return len(parts) > 0 && s.g.match(parts[0]) && matchSegsSlow(segs[1:], parts[1:])
}

// TestHostilePatternIsFast: a pattern of many "**" against a deep path
// is judged in time proportional to their sizes (the plain recursion
// would take about C(120, 12) steps).
func TestHostilePatternIsFast(t *testing.T) {
	t.Parallel()
	p, _ := parsePattern(strings.Repeat("**/a/", 12)+"b", nil)
	parts := strings.Split(strings.Repeat("a/", 120)+"c", "/")
	if p.match(parts, false) != noMatch {
		t.Fatal("matched")
	}
}

// FuzzPattern parses any line and matches it against any path: no panic,
// and matchSegs agrees with its plain recursive definition.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"*.log", "!keep.log", "a/**/b", "**/c/", `\#x`, "[!a]?", "x[", "a//b", "**"} {
		f.Add(s, "a/b/c", true)
	}
	f.Fuzz(func(t *testing.T, line, rel string, isDir bool) {
		p, ok := parsePattern(line, []string{"d"})
		if !ok {
			return
		}
		parts := append([]string{"d"}, strings.Split(rel, "/")...)
		if len(parts) > 12 || len(p.segs) > 12 {
			return
		}
		r := p.match(parts, isDir)
		if (r == include) != (p.negate && r != noMatch) {
			t.Fatalf("%q on %q: %v with negate %v", line, rel, r, p.negate)
		}
		if got, want := matchSegs(p.segs, parts[1:]), matchSegsSlow(p.segs, parts[1:]); got != want {
			t.Fatalf("matchSegs(%q, %q) = %v, the recursive definition says %v", line, parts[1:], got, want)
		}
	})
}
