package patch

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUnified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, new, want string
	}{
		{name: "equal", old: "a\n", new: "a\n", want: ""},
		{
			name: "one line", old: "a\nb\nc\n", new: "a\nB\nc\n",
			want: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		},
		{
			name: "create", old: "", new: "x\ny\n",
			want: "--- a/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		},
		{
			name: "delete all", old: "x\n", new: "",
			want: "--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x\n",
		},
		{
			name: "no newline at end", old: "a\nb", new: "a\nb\n",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		{
			name: "crlf not shown", old: "a\r\nb\r\n", new: "a\r\nc\r\n",
			want: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
		},
		{
			name: "two hunks", old: lines(1, 20), new: strings.Replace(strings.Replace(lines(1, 20), "2\n", "two\n", 1), "19\n", "nineteen\n", 1),
			want: "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n",
		},
		{
			name: "insert in the middle", old: "a\nb\nc\nd\n", new: "a\nb\nX\nc\nd\n",
			want: "--- a/f\n+++ b/f\n@@ -1,4 +1,5 @@\n a\n b\n+X\n c\n d\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Unified("a/f", "b/f", tt.old, tt.new, 3)
			if got != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func lines(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "%d\n", i)
	}
	return sb.String()
}

// TestUnifiedBounded checks that a diff with many scattered changes in a
// big file stays fast (it falls back to pairing lines by position).
func TestUnifiedBounded(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&a, "line %d foo\n", i)
		if i%50 == 0 {
			fmt.Fprintf(&b, "line %d bar\n", i)
		} else {
			fmt.Fprintf(&b, "line %d foo\n", i)
		}
	}
	start := time.Now()
	d := Unified("a/f", "b/f", a.String(), b.String(), 3)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("diff took %v", el)
	}
	if got := strings.Count(d, "\n-line "); got != 4000 {
		t.Errorf("diff removes %d lines, want 4000", got)
	}
	checkDiff(t, a.String(), b.String(), d)
}

// checkDiff rebuilds new from old and the diff d, to check d is right.
func checkDiff(t *testing.T, old, new, d string) {
	t.Helper()
	if old == new {
		if d != "" {
			t.Fatalf("diff of equal texts is %q", d)
		}
		return
	}
	a := splitAfter(old)
	var out []string
	pos := 0
	dl := strings.Split(strings.TrimSuffix(d, "\n"), "\n")[2:]
	for i := 0; i < len(dl); i++ {
		l := dl[i]
		if strings.HasPrefix(l, "@@") {
			var as, an, bs, bn int
			parseRange(l, &as, &an, &bs, &bn)
			start := as - 1
			if an == 0 {
				start = as
			}
			out = append(out, a[pos:start]...)
			pos = start
			continue
		}
		noNL := i+1 < len(dl) && dl[i+1] == "\\ No newline at end of file"
		switch l[0] {
		case ' ':
			out = append(out, a[pos])
			pos++
		case '-':
			pos++
		case '+':
			eol := "\n"
			if len(a) > 0 && strings.HasSuffix(a[min(pos, len(a)-1)], "\r\n") {
				eol = "\r\n"
			}
			if noNL {
				eol = ""
			}
			out = append(out, l[1:]+eol)
		case '\\':
		default:
			t.Fatalf("bad diff line %q", l)
		}
	}
	out = append(out, a[pos:]...)
	if got := strings.Join(out, ""); got != new && strings.ReplaceAll(got, "\r", "") != strings.ReplaceAll(new, "\r", "") {
		t.Fatalf("diff does not rebuild new:\n%q\nwant:\n%q\ndiff:\n%s", clip(got), clip(new), clip(d))
	}
}

func parseRange(l string, as, an, bs, bn *int) {
	var a, b string
	fmt.Sscanf(l, "@@ -%s +%s @@", &a, &b)
	parse := func(s string, start, n *int) {
		*n = 1
		if i := strings.IndexByte(s, ','); i >= 0 {
			fmt.Sscanf(s[i+1:], "%d", n)
			s = s[:i]
		}
		fmt.Sscanf(s, "%d", start)
	}
	parse(a, as, an)
	parse(b, bs, bn)
}
