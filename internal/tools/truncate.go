package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Truncate caps s at about maxBytes by keeping its head and its tail and
// putting "\n… [N bytes omitted] …\n" between them, so the model sees both
// how the output starts and how it ends (where errors and summaries
// usually are). The result is at most maxBytes long, unless maxBytes is
// too small to hold even the marker, when the marker alone is returned.
// It never splits a UTF-8 sequence, and prefers to cut at line ends when
// one is near. s is returned unchanged if it fits.
func Truncate(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	// The marker's length depends on the count it shows; the count is at
	// most len(s), so budget for that many digits.
	markerLen := len(omittedMarker(len(s)))
	keep := maxBytes - markerLen
	if keep <= 0 {
		return strings.Trim(omittedMarker(len(s)), "\n")
	}
	headLen := (keep + 1) / 2
	tailLen := keep - headLen

	head := s[:headLen]
	// Back up to the start of a rune so none is split.
	for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
		head = head[:len(head)-1]
	}
	// Prefer to end the head at a line end in its second half.
	if i := strings.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i]
	}

	start := len(s) - tailLen
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	tail := s[start:]
	// Prefer to start the tail at a line start in its first half.
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}

	omitted := len(s) - len(head) - len(tail)
	return head + omittedMarker(omitted) + tail
}

// omittedMarker is the text Truncate puts where it cut n bytes.
func omittedMarker(n int) string {
	return fmt.Sprintf("\n… [%d bytes omitted] …\n", n)
}
