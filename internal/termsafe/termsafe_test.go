package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text\nwith\ttabs", "plain text\nwith\ttabs"},
		{"héllo — 世界", "héllo — 世界"},
		{"\x1b]52;c;ZXZpbA==\x07", "␛]52;c;ZXZpbA==^G"},
		{"\x1b]0;title\x1b\\", "␛]0;title␛\\"},
		{"red \x1b[31mtext\x1b[0m", "red ␛[31mtext␛[0m"},
		{"over\rwrite", "over^Mwrite"},
		{"crlf\r\nok", "crlf\r\nok"},
		{"bidi \u202egnp.exe", "bidi <U+202E>gnp.exe"},
		{"c1 \u009b31m", "c1 <U+009B>31m"},
		{"del\x7f", "del<U+007F>"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"nul\x00", "nul^@"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("\x1b]52;c;x\x07")
	f.Add("a\u202eb\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r) {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
		if strings.Contains(strings.ReplaceAll(out, "\r\n", ""), "\r") {
			t.Fatalf("bare CR left in %q", out)
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}
