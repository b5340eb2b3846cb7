package compact

import (
	"strings"
	"unicode/utf8"
)

// cutMiddle shortens s to about limit bytes by keeping its head and its tail
// (half each, moved to a line boundary when one is near and always to a
// rune boundary) with the line marker(omitted bytes) between them. s is
// returned as is when it fits.
func cutMiddle(s string, limit int, marker func(omitted int) string) string {
	if len(s) <= limit {
		return s
	}
	limit = fitRange(limit, 0, len(s))
	h := limit / 2
	t := limit - h
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	if i := strings.LastIndexByte(s[:h], '\n'); i >= 0 && i+1 >= h*4/5 {
		h = i + 1
	}
	ts := len(s) - t
	for ts < len(s) && !utf8.RuneStart(s[ts]) {
		ts++
	}
	if i := strings.IndexByte(s[ts:], '\n'); i >= 0 && i+1 <= t/5 {
		ts += i + 1
	}
	if ts < h {
		ts = h
	}
	var b strings.Builder
	b.Grow(h + len(s) - ts + 100)
	b.WriteString(s[:h])
	if h > 0 && s[h-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(marker(ts - h))
	if ts < len(s) {
		b.WriteByte('\n')
		b.WriteString(s[ts:])
	}
	return b.String()
}

// cutHead shortens s to about limit bytes, keeping its start (to a rune
// boundary) and adding suffix when anything was cut.
func cutHead(s string, limit int, suffix string) string {
	if len(s) <= limit {
		return s
	}
	limit = fitRange(limit, 0, len(s))
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + suffix
}

func fitRange(v, lo, hi int) int {
	return min(max(v, lo), hi)
}

// oneLine returns s with its line breaks shown as " ⏎ ", for lists.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

// fence returns a code fence longer than any run of backticks in s, so s
// can be shown verbatim inside it.
func fence(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
