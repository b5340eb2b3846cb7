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
		{"请修复解析器的错误", "解析器", "请修复**解析器**的错误"},
		{"解析器，解析", "解析器", "**解析器**，**解析**"}, // every matching character, touching ones marked once
		{"修复 parser 的 bug", "修复 bug", "**修复** parser 的 **bug**"},
		{"ＡＰＩキーを設定", "api", "**ＡＰＩ**キーを設定"},
		{"一二三四五六七八九十一二三四五六七八九十错", "错", "…六七八九十一二三四五六七八九十**错**"},
	} {
		if got := snippet(c.text, snippetTerms(c.query), 16); got != c.want {
			t.Errorf("snippet(%q, %q) = %q, want %q", c.text, c.query, got, c.want)
		}
	}
}
