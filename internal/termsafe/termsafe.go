// Package termsafe neutralises text before it reaches a terminal. Model
// output, tool output and file names are untrusted: an escape sequence in
// them could set the clipboard (OSC 52), retitle the window, move the
// cursor over earlier output or hide text, and bidi controls can make a
// command read differently from what runs. Sanitize keeps printable text,
// newlines and tabs, and shows everything else as a visible placeholder.
//
// Any front end may import termsafe; it imports nothing of mx-claw.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Sanitize returns s with terminal control characters, escape sequences
// and bidirectional-override characters made harmless and visible: ESC
// becomes "␛", other C0/C1 controls become "^X" or "<U+XXXX>", and the
// bidi controls become "<U+XXXX>". Newlines and tabs are kept; a carriage
// return is kept only before a newline. Invalid UTF-8 becomes U+FFFD.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				b.WriteByte('\r')
			} else {
				b.WriteString("^M")
			}
		case r == 0x1b:
			b.WriteString("␛")
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f || (r >= 0x80 && r < 0xa0) || bidi(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no change, without allocating.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r < 0xa0) || bidi(r) {
			return false
		}
		i += size
	}
	return true
}

// bidi reports whether r is a bidirectional formatting character.
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
