package frontmatter

import (
	"errors"
	"slices"
	"testing"
)

type meta struct {
	Name         string `yaml:"name"`
	Description  string `yaml:"description"`
	AllowedTools List   `yaml:"allowed-tools"`
	Model        string `yaml:"model"`
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in      string
		want          meta
		body          string
		lenient, fail bool
	}{
		{name: "plain", in: "---\nname: a\ndescription: Does a.\n---\nBody\n",
			want: meta{Name: "a", Description: "Does a."}, body: "Body\n"},
		{name: "crlf and bom", in: "\uFEFF---\r\nname: a\r\ndescription: d\r\n---\r\nBody\r\n",
			want: meta{Name: "a", Description: "d"}, body: "Body\n"},
		{name: "block scalar and flow list", in: "---\nname: a\ndescription: |\n  Line one.\n  Line two.\nallowed-tools: [Read, \"Bash(npm test:*)\"]\n---\n",
			want: meta{Name: "a", Description: "Line one.\nLine two.\n", AllowedTools: List{"Read", "Bash(npm test:*)"}}},
		{name: "claude code comma list", in: "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Read\n---\nx",
			want: meta{AllowedTools: List{"Bash(git add:*)", "Bash(git status:*)", "Read"}}, body: "x"},
		{name: "agent skills space list", in: "---\nallowed-tools: Bash(git:*) Read\n---\n",
			want: meta{AllowedTools: List{"Bash(git:*)", "Read"}}},
		{name: "yaml sequence", in: "---\nallowed-tools:\n  - Read\n  - Grep\n---\n",
			want: meta{AllowedTools: List{"Read", "Grep"}}},
		{name: "colon in an unquoted value", in: "---\nname: a\ndescription: Use when: the user asks\nmodel: claude-3-5-haiku-20241022\n---\nB",
			want: meta{Name: "a", Description: "Use when: the user asks", Model: "claude-3-5-haiku-20241022"}, body: "B", lenient: true},
		{name: "closing dots", in: "---\nname: a\n...\nrest", want: meta{Name: "a"}, body: "rest"},
		{name: "no front matter", in: "# Title\n", fail: true},
		{name: "unclosed", in: "---\nname: a\n", fail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var m meta
			res, err := Parse([]byte(c.in), &m)
			if c.fail {
				if !errors.Is(err, ErrNoFrontMatter) {
					t.Fatalf("err = %v, want ErrNoFrontMatter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != c.want.Name || m.Description != c.want.Description || m.Model != c.want.Model || !slices.Equal(m.AllowedTools, c.want.AllowedTools) {
				t.Errorf("got %+v, want %+v", m, c.want)
			}
			if res.Body != c.body || res.Lenient != c.lenient {
				t.Errorf("body %q lenient %v, want %q %v", res.Body, res.Lenient, c.body, c.lenient)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	t.Parallel()
	got := SplitList(" Bash(git commit -m:*),Read  Write(src/**) ,, ")
	if want := (List{"Bash(git commit -m:*)", "Read", "Write(src/**)"}); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
