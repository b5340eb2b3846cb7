package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/store"
)

// testSearchCJK: words of Chinese, Japanese and Korean text are found
// inside longer runs of those scripts (which have no spaces between
// words), alone or mixed with English, with their punctuation and
// full-width letters; the snippet is the message's own text with the
// found word marked.
func testSearchCJK(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Open(t, Options{})
	NewSession(t, s, "s1")
	msgs := []*protocol.Message{
		{Role: protocol.RoleUser, Content: "请修复解析器的错误"},                        // 1 Chinese
		{Role: protocol.RoleAssistant, Content: "好的，我先看「解析器」。然后运行测试。"},         // 2 Chinese punctuation
		{Role: protocol.RoleUser, Content: "修复 parser 的 bug"},                  // 3 mixed
		{Role: protocol.RoleTool, ToolCallID: "c", Content: "パーサーのテストが失敗しました"}, // 4 Japanese kana + kanji
		{Role: protocol.RoleUser, Content: "한국어 검색기를 고쳐 주세요"},                  // 5 Korean
		{Role: protocol.RoleUser, Content: "ＡＰＩキーを設定する"},                       // 6 full-width letters
		{Role: protocol.RoleUser, Content: "The Parser (解析器) is fixed"},        // 7 English around CJK
		{Role: protocol.RoleUser, Content: "数据库，连接池。配置文件"},                     // 8 words split by punctuation
		{Role: protocol.RoleUser, Content: "一的是的人我在有"},                         // 9 common characters
	}
	if err := s.AppendBatch(ctx, "s1", store.Batch{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		want  string // seqs, in any order
		mark  string // in the snippet of the first message wanted, if set
	}{
		{query: "解析器", want: "1,2,7", mark: "**解析器**"},
		{query: "错误", want: "1", mark: "请修复解析器的**错误**"},
		{query: "器", want: "1,2,7"},    // one character
		{query: "析解", want: ""},        // its characters in another order
		{query: "解析器的错误", want: "1"},   // a longer run
		{query: "解析器，", want: "1,2,7"}, // punctuation is no word
		{query: "我先看", want: "2"},      // in a run between punctuation
		{query: "「解析器」", want: "2,1,7"},
		{query: "测试。", want: "2"},
		{query: "修复 bug", want: "3", mark: "**修复** parser 的 **bug**"},
		{query: "修复parser", want: "3"}, // CJK and English touching in the query
		{query: "parser", want: "3,7"},
		{query: "テスト", want: "4", mark: "パーサーの**テスト**が失敗しました"},
		{query: "失敗", want: "4"},
		{query: "ハーサー", want: ""}, // パ is not ハ: kana keep their marks
		{query: "パーサー テスト", want: "4"},
		{query: "검색기", want: "5", mark: "한국어 **검색기**를 고쳐 주세요"},
		{query: "한국어", want: "5"},
		{query: "고쳐 주세요", want: "5"},
		{query: `"검색기를 고쳐"`, want: "5"},
		{query: "api", want: "6"}, // full-width letters are their ASCII forms
		{query: "ＡＰＩ", want: "6"},
		{query: "設定*", want: "6"},
		{query: "连接", want: "8"},                         // two characters
		{query: "连接池", want: "8"},                        // three
		{query: "配置文件", want: "8", mark: "连接池。**配置文件**"}, // four
		{query: "一的是的", want: "9"},
		{query: "是的人我", want: "9"},
		{query: "库连", want: ""},    // split by punctuation: not a word
		{query: "数据库连接", want: ""}, // nor this
		{query: "池配置", want: ""},
		{query: "的是", want: "9"},
		{query: "是", want: "9"},
		{query: "请错", want: ""}, // 请 and 错 are in 1, but not together
		{query: "器的错误", want: "1"},
		{query: "数据库 配置", want: "8"},
		{query: `"数据库，连接池"`, want: "8"}, // a phrase of two runs
	}
	for _, c := range cases {
		hits, err := s.Search(ctx, store.SearchQuery{Text: c.query})
		if err != nil {
			t.Errorf("%q: %v", c.query, err)
			continue
		}
		got := []string{}
		for _, h := range hits {
			got = append(got, strconv.FormatInt(h.Seq, 10))
			if strings.ContainsRune(h.Snippet, ' ') && !strings.ContainsRune(msgs[h.Seq-1].Content, ' ') {
				t.Errorf("%q: snippet %q of seq %d has spaces its text has not", c.query, h.Snippet, h.Seq)
			}
		}
		want := []string{}
		if c.want != "" {
			want = strings.Split(c.want, ",")
		}
		if strings.Join(sorted(got), ",") != strings.Join(sorted(want), ",") {
			t.Errorf("%q: hits %v, want %v", c.query, got, want)
			continue
		}
		if c.mark == "" {
			continue
		}
		for _, h := range hits {
			if strconv.FormatInt(h.Seq, 10) == want[0] && !strings.Contains(h.Snippet, c.mark) {
				t.Errorf("%q: snippet %q does not hold %q", c.query, h.Snippet, c.mark)
			}
		}
	}
}
