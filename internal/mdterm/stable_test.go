package mdterm

import (
	"strings"
	"testing"
)

// streamDoc is an answer with every kind of block, written as models
// write them.
const streamDoc = `# Fixing the build

The build fails because **helper** was renamed; CI builds with
` + "`-mod=readonly`" + `.

Title set with underlines
-------------------------

- one item
- two items
  that wrap

- a loose item

1. first
2. second

> a quote
that continues lazily

` + "```go" + `
func run() error {

	return helper()
}
` + "```" + `

| file | change |
|------|--------|
| a.go | renamed |

***

Done. Run the tests again.
`

// TestStableEndRendersAsWhole cuts the answer at every byte, as deltas
// would: the stable prefix and the rest, rendered apart, give what the
// whole renders to.
func TestStableEndRendersAsWhole(t *testing.T) {
	st := Style{NoColor: true}
	for _, doc := range []string{streamDoc, strings.ReplaceAll(streamDoc, "\n", "\r\n")} {
		whole := Render(doc, 60, st)
		for i := 0; i <= len(doc); i++ {
			n := StableEnd(doc[:i])
			if n == 0 {
				continue
			}
			if n > i || doc[n-1] != '\n' {
				t.Fatalf("StableEnd(prefix %d) = %d: not a line start within the prefix", i, n)
			}
			head, tail := Render(doc[:n], 60, st), Render(doc[n:], 60, st)
			if got := head + "\n\n" + tail; got != whole {
				t.Fatalf("cut at %d (prefix %d) renders differently:\n--- parts\n%s\n--- whole\n%s", n, i, got, whole)
			}
		}
	}
	if n := StableEnd(streamDoc); n == 0 || !strings.HasPrefix(streamDoc[n:], "Done.") {
		t.Errorf("StableEnd(whole) = %d, want the start of the last paragraph", n)
	}
}
