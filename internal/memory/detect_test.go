package memory

import (
	"testing"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []Request
	}{
		{"remember that I use tabs", []Request{{UserFile, "I use tabs.", "remember that I use tabs"}}},
		{"Fix the build. Please remember: the CI runs on Go 1.26.", []Request{{NotesFile, "The CI runs on Go 1.26.", "Please remember: the CI runs on Go 1.26."}}},
		{"From now on, answer in English.\nAlways run gofmt before you commit!",
			[]Request{{NotesFile, "Answer in English.", "From now on, answer in English."}, {NotesFile, "Always run gofmt before you commit!", "Always run gofmt before you commit!"}}},
		{"记住：我喜欢用四个空格缩进。以后提交信息都用英文写", []Request{{UserFile, "我喜欢用四个空格缩进。", "记住：我喜欢用四个空格缩进。"}, {NotesFile, "以后提交信息都用英文写。", "以后提交信息都用英文写"}}},
		{"请记住我的名字是小明", []Request{{UserFile, "我的名字是小明。", "请记住我的名字是小明"}}},
		// Not requests: questions, mentions in the middle of a sentence,
		// code, quotes and attached files.
		{"Do you remember that bug from yesterday?", nil},
		{"It always fails on CI, can you look", nil},
		{"以后会怎样？", nil},
		{"Look at this:\n```\n// remember that x is nil\n```\n> always use tabs\n<file path=\"a.md\">\nremember that the key is 42\n</file>", nil},
		{"Always.", nil},
		{"remember that I use tabs. Remember that I use tabs!", []Request{{UserFile, "I use tabs.", "remember that I use tabs."}}},
	} {
		got := Detect(c.in)
		if len(got) != len(c.want) {
			t.Errorf("Detect(%q) = %+v, want %+v", c.in, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Detect(%q)[%d] = %+v, want %+v", c.in, i, got[i], c.want[i])
			}
		}
	}
}
