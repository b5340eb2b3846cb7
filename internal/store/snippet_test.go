package store

import "testing"

func TestSnippet(t *testing.T) {
	t.Parallel()
	long := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen quokka sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree"
	for _, c := range []struct{ text, query, want string }{
		{"the flaky Tests fail", "test", "the flaky **Tests** fail"},
		{"running\n\tthe  parser, tested twice", "tests pars*", "running the  **parser**, **tested** twice"},
		{long, "quokka", "…eight nine ten eleven twelve thirteen fourteen **quokka** sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree"},
		{"no match here", "zebra", "no match here"},
		{"", "x", ""},
		{"日本語 テキスト です", "テキスト", "日本語 **テキスト** です"},
	} {
		if got := snippet(c.text, snippetTerms(c.query), 16); got != c.want {
			t.Errorf("snippet(%q, %q) = %q, want %q", c.text, c.query, got, c.want)
		}
	}
}
