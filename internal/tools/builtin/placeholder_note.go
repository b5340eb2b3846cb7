package builtin

import (
	"strings"
)

// placeholderNote returns, when a command's output names one of the
// sandbox's placeholders (absent protected paths it masks for the run),
// the one sentence that says what they are; "" otherwise.
func placeholderNote(output string, placeholders []string) string {
	var named []string
	for _, p := range placeholders {
		if mentions(output, p) {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		return ""
	}
	return "[sandbox: " + strings.Join(named, ", ") + " are not real files: empty read-only placeholders the sandbox puts at absent protected paths, gone after the command.]"
}

// mentions reports whether output holds name as a whole path: not part of
// a longer name on either side.
func mentions(output, name string) bool {
	isName := func(b byte) bool {
		return b == '.' || b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(output[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !isName(output[start-1])) && (end == len(output) || !isName(output[end])) {
			return true
		}
		i = start + 1
	}
}
