package mdterm

import "strings"

// StableEnd returns how much of a Markdown text that is still being
// written (an answer streaming in) can be rendered for good: the length of
// its longest prefix made of whole top-level blocks that more text cannot
// change. That is every block but the last one begun, counting only whole
// lines — a paragraph can still become a setext heading, a list can gain
// items, a code fence runs until it is closed. Rendering the prefix, and
// later the rest, gives what Render gives for the whole text, the two
// parts separated by a blank line.
//
// The result is 0 or the offset of the start of a line.
func StableEnd(markdown string) int {
	end := strings.LastIndexByte(markdown, '\n')
	if end < 0 {
		return 0
	}
	lines := strings.Split(markdown[:end], "\n")
	parsed := make([]string, len(lines))
	for i, l := range lines {
		parsed[i] = strings.TrimSuffix(l, "\r") // as Render reads CRLF
	}
	_, starts := parseStarts(parsed)
	if len(starts) < 2 {
		return 0
	}
	last := starts[len(starts)-1]
	off := 0
	for _, l := range lines[:last] {
		off += len(l) + 1
	}
	return off
}
