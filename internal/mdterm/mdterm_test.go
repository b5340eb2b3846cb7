package mdterm

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestRenderPlain(t *testing.T) {
	cases := []struct {
		name, in string
		width    int
		want     string
	}{
		{"paragraph wraps", "one two three four five six seven eight nine ten eleven twelve", 20,
			"one two three four\nfive six seven eight\nnine ten eleven\ntwelve"},
		{"soft breaks join", "one\ntwo\nthree", 40, "one two three"},
		{"hard break", "one  \ntwo\\\nthree", 40, "one\ntwo\nthree"},
		{"emphasis", "a **bold** b *it* c _em_ d ***both*** e", 40, "a bold b it c em d both e"},
		{"no emphasis", "2 * 3 * 4 and snake_case_name and a*b", 60, "2 * 3 * 4 and snake_case_name and a*b"},
		{"unclosed", "**open and `tick", 40, "**open and `tick"},
		{"strike", "~~old~~ new", 40, "~~old~~ new"},
		{"inline code", "run `go test` and ``a ` b``", 40, "run `go test` and `a ` b`"},
		{"code keeps stars", "`**x**` and **`y`**", 40, "`**x**` and `y`"},
		{"escapes", `\*not\* \_em\_`, 40, "*not* _em_"},
		{"link", "see [the docs](https://x.dev/d \"title\") now", 60, "see the docs (https://x.dev/d) now"},
		{"bare link", "[https://x.dev](https://x.dev) and <https://y.dev>", 60, "https://x.dev and https://y.dev"},
		{"image", "![logo](l.png)", 40, "logo (l.png)"},
		{"not a link", "[a] (b) [c]", 40, "[a] (b) [c]"},
		{"headings", "# One\n## Two ##\n###### Six\n#nope", 40, "# One\n\n## Two\n\n###### Six\n\n#nope"},
		{"setext", "Title\n=====\n\nSub\n---", 40, "# Title\n\n## Sub"},
		{"rule", "a\n\n***\n\nb", 20, "a\n\n────────────────────\n\nb"},
		{"bullets", "- one\n- two\n* three", 40, "• one\n• two\n• three"},
		{"nested", "- a\n  - b\n    - c\n- d", 40, "• a\n  ◦ b\n    ▪ c\n• d"},
		{"loose", "- a\n\n- b", 40, "• a\n\n• b"},
		{"ordered", "1. one\n2. two\n   more\n10. ten", 40, " 1. one\n 2. two more\n10. ten"},
		{"hanging indent", "- alpha beta gamma delta epsilon zeta eta", 22,
			"• alpha beta gamma\n  delta epsilon zeta\n  eta"},
		{"ordered with bullets", "1. Do:\n   - x\n   - y\n2. Done", 40, "1. Do:\n   ◦ x\n   ◦ y\n2. Done"},
		{"list with code", "1. Run:\n\n   ```sh\n   make\n   ```\n2. Done", 40, "1. Run:\n\n   sh\n     make\n\n2. Done"},
		{"quote", "> quoted text that wraps around\n> the width", 20,
			"│ quoted text that\n│ wraps around the\n│ width"},
		{"quote lazy", "> a\nb\n\nc", 40, "│ a b\n\nc"},
		{"code", "```go\nfunc f() {\n\treturn    1\n}\n```\nafter", 10,
			"go\n  func f() {\n      return    1\n  }\n\nafter"},
		{"code unclosed", "~~~\nx := 1", 40, "  x := 1"},
		{"code no wrap", "```\n" + strings.Repeat("x", 30) + "\n```", 20, "  " + strings.Repeat("x", 30)},
		{"table", "| a | bb |\n|---|:--:|\n| ccc | d |\n| e |", 40,
			"a   │ bb\n────┼───\nccc │ d\ne   │"},
		{"table right", "a|b\n-|-:\nx|100\nyy|2", 40, "a  │   b\n───┼────\nx  │ 100\nyy │   2"},
		{"table too wide", "| name | description |\n|---|---|\n| x | a rather long description |", 20,
			"name: x\ndescription: a\nrather long\ndescription"},
		{"pipe in code", "| a | b |\n|---|---|\n| `x|y` | z |", 40, "a     │ b\n──────┼──\n`x|y` │ z"},
		{"blank around", "\n\n  text  \n\n", 40, "text"},
		{"control chars", "a\x1b[31mb\x07", 40, "a\uFFFD[31mb\uFFFD"},
		{"wide runes", "日本語の文章を折り返す 日本語の文章を折り返す", 24, "日本語の文章を折り返す\n日本語の文章を折り返す"},
		{"narrow width raised", "- a b c d e f g h i j k l m n o p", 5, "• a b c d e f g h i\n  j k l m n o p"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Render(c.in, c.width, Style{NoColor: true})
			if got != c.want {
				t.Errorf("Render(%q, %d)\n--- got\n%s\n--- want\n%s", c.in, c.width, got, c.want)
			}
		})
	}
}

func TestRenderColor(t *testing.T) {
	st := DefaultStyle()
	got := Render("a **b *c* d** `e`", 40, st)
	want := "a \x1b[1mb \x1b[3mc\x1b[0m\x1b[1m d\x1b[0m \x1b[" + st.Code + "me\x1b[0m"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if plain := ansi.Strip(got); plain != "a b c d e" {
		t.Errorf("stripped: %q", plain)
	}
	// A style spanning a wrap is closed at the end of the line and
	// reopened at the start of the next.
	got = Render("- **one two three four five six seven**", 20, st)
	for _, l := range strings.Split(got, "\n") {
		if !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("line not closed: %q", l)
		}
	}
	if !strings.HasPrefix(strings.Split(got, "\n")[1], "  \x1b[1m") {
		t.Errorf("continuation not reopened after the indent: %q", got)
	}
	// Code is highlighted.
	got = Render("```go\nfunc f() {} // x\n```", 40, st)
	if !strings.Contains(got, "\x1b["+st.Keyword+"mfunc") || !strings.Contains(got, "\x1b["+st.Comment+"m// x") {
		t.Errorf("not highlighted: %q", got)
	}
	// Mono keeps the ticks and uses no colours.
	got = Render("`x` **y**", 40, MonoStyle())
	if ansi.Strip(got) != "`x` y" || strings.Contains(got, "38;") {
		t.Errorf("mono: %q", got)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"# h\n\npara **b** *i* `c` [l](u)\n\n- a\n  - b\n\n1. x\n\n> q\n\n---\n\n```go\nx\n```\n\n|a|b|\n|-|-|\n|c|d|",
		"> > > > > > > > > > > > deep",
		"- - - - - - - - - - - - - - x",
		"***a** b*", "[a](<b c>)", "``` \n```", "|a|\n|-|\n|" + strings.Repeat("x", 100) + "|",
		strings.Repeat("longword", 20),
	} {
		f.Add(s, 40)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, md string, width int) {
		width %= 200
		for _, st := range []Style{{NoColor: true}, DefaultStyle()} {
			for _, l := range render(md, width, st) {
				if w := ansi.StringWidth(l.text); !l.verbatim && w > max(width, MinWidth) {
					t.Fatalf("line %q is %d wide, more than %d", l.text, w, max(width, MinWidth))
				}
			}
		}
	})
}

// TestRenderPathological guards against inputs that used to take
// exponential time, such as deeply nested quotes.
func TestRenderPathological(t *testing.T) {
	for _, p := range []string{"*", "**", "***", "*a", "_", "__a", "[", "[a](", "`", "``a", "> ", "- ", "1. ", "  - ", "~~", "![", "<", "|", "|-\n", "*a**", "**a*", "*`", "[*", "***a"} {
		s := strings.Repeat(p, 2000)
		start := time.Now()
		Render(s, 40, DefaultStyle())
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q repeated: %v", p, d)
		}
	}
}
