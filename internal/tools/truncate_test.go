package tools

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	lines := strings.Repeat("line of text\n", 200)
	tests := []struct {
		name string
		s    string
		max  int
	}{
		{"ascii", strings.Repeat("abcdefghij", 100), 100},
		{"lines", lines, 300},
		{"multibyte", strings.Repeat("héllo wörld 日本語 🙂 ", 100), 257},
		{"one long rune run", strings.Repeat("🙂", 500), 101},
		{"just over", strings.Repeat("x", 1001), 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Truncate(tt.s, tt.max)
			checkTruncated(t, tt.s, got, tt.max)
		})
	}
}

func TestTruncateEveryCap(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("aé日🙂\n", 40)
	for maxBytes := 40; maxBytes < len(s); maxBytes++ {
		checkTruncated(t, s, Truncate(s, maxBytes), maxBytes)
	}
}

func checkTruncated(t *testing.T, s, got string, maxBytes int) {
	t.Helper()
	if len(got) > maxBytes {
		t.Fatalf("Truncate(_, %d) is %d bytes long", maxBytes, len(got))
	}
	if !utf8.ValidString(got) {
		t.Fatalf("Truncate(_, %d) split a rune: %q", maxBytes, got)
	}
	markerRE := regexp.MustCompile("\n… \\[(\\d+) bytes omitted\\] …\n")
	loc := markerRE.FindStringSubmatchIndex(got)
	if loc == nil {
		t.Fatalf("Truncate(_, %d) has no marker: %q", maxBytes, got)
	}
	n, _ := strconv.Atoi(got[loc[2]:loc[3]])
	head, tail := got[:loc[0]], got[loc[1]:]
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Fatalf("Truncate(_, %d): head or tail is not from the input: %q", maxBytes, got)
	}
	if len(head)+n+len(tail) != len(s) {
		t.Fatalf("Truncate(_, %d): %d + %d omitted + %d != %d", maxBytes, len(head), n, len(tail), len(s))
	}
	if len(head) == 0 || len(tail) == 0 {
		t.Fatalf("Truncate(_, %d) lost its head or tail: %q", maxBytes, got)
	}
}

func TestTruncateEdges(t *testing.T) {
	t.Parallel()
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate(short) = %q", got)
	}
	if got := Truncate("exactly10!", 10); got != "exactly10!" {
		t.Errorf("Truncate(exact) = %q", got)
	}
	if got := Truncate(strings.Repeat("x", 100), 5); got != "… [100 bytes omitted] …" {
		t.Errorf("Truncate(tiny cap) = %q", got)
	}
	if got := Truncate("", 0); got != "" {
		t.Errorf("Truncate(empty) = %q", got)
	}
}
