package patch

import (
	"fmt"
	"strings"
)

// Bounds on the work of the line diff. Past them the changed middle of the
// files is shown line by line (when both have as many lines) or as one
// block: still a correct diff, just not a minimal one.
const (
	maxDiffEdits = 2000       // inserted plus deleted lines
	maxDiffWork  = 20_000_000 // diagonals visited plus lines compared
)

// block is one change: a[a0:a1] is replaced by b[b0:b1].
type block struct{ a0, a1, b0, b1 int }

// Unified returns a unified diff from old to new with context lines of
// context around each change, headed "--- oldLabel" and "+++ newLabel"
// (pass "a/path" and "b/path", or "/dev/null" for a side that does not
// exist). It returns "" when old and new are equal. Lines are compared
// with their endings; a CR before a line's "\n" is not shown, and a last
// line without "\n" is followed by "\ No newline at end of file".
func Unified(oldLabel, newLabel, old, new string, context int) string {
	if old == new {
		return ""
	}
	context = max(context, 0)
	a, b := splitAfter(old), splitAfter(new)
	blocks := diffLines(a, b)

	var sb strings.Builder
	sb.WriteString("--- " + oldLabel + "\n")
	sb.WriteString("+++ " + newLabel + "\n")
	for i := 0; i < len(blocks); {
		j := i
		for j+1 < len(blocks) && blocks[j+1].a0-blocks[j].a1 <= 2*context {
			j++
		}
		first, last := blocks[i], blocks[j]
		as, ae := max(0, first.a0-context), min(len(a), last.a1+context)
		bs, be := first.b0-(first.a0-as), last.b1+(ae-last.a1)
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(as, ae-as), hunkRange(bs, be-bs))
		pos := as
		for _, bl := range blocks[i : j+1] {
			writeLines(&sb, ' ', a[pos:bl.a0])
			writeLines(&sb, '-', a[bl.a0:bl.a1])
			writeLines(&sb, '+', b[bl.b0:bl.b1])
			pos = bl.a1
		}
		writeLines(&sb, ' ', a[pos:ae])
		i = j + 1
	}
	return sb.String()
}

// hunkRange formats the range of a hunk header: "3" for one line at line
// 3, "3,4" for four lines from it, "2,0" for none after line 2.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeLines(sb *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		text, hasNL := strings.CutSuffix(l, "\n")
		text = strings.TrimSuffix(text, "\r")
		sb.WriteByte(prefix)
		sb.WriteString(text)
		sb.WriteByte('\n')
		if !hasNL {
			sb.WriteString("\\ No newline at end of file\n")
		}
	}
}

// splitAfter splits s into lines that keep their "\n".
func splitAfter(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns the changes that turn a into b, in order.
func diffLines(a, b []string) []block {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	blocks, ok := myers(am, bm)
	if !ok {
		blocks = coarse(am, bm)
	}
	for i := range blocks {
		blocks[i].a0 += p
		blocks[i].a1 += p
		blocks[i].b0 += p
		blocks[i].b1 += p
	}
	return blocks
}

// coarse is the fallback diff: changed lines paired by position when a and
// b have as many lines, else one block replacing all of a.
func coarse(a, b []string) []block {
	if len(a) != len(b) {
		return []block{{0, len(a), 0, len(b)}}
	}
	var blocks []block
	for i := 0; i < len(a); i++ {
		if a[i] == b[i] {
			continue
		}
		j := i
		for j < len(a) && a[j] != b[j] {
			j++
		}
		blocks = append(blocks, block{i, j, i, j})
		i = j
	}
	return blocks
}

// myers is Myers' O(ND) greedy diff. It gives up (ok false) past
// maxDiffEdits edits or maxDiffWork steps.
func myers(a, b []string) (blocks []block, ok bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[-d-1 … d+1] as it was before step d.
	var trace [][]int32
	work := 0
	for d := 0; d <= maxD; d++ {
		snap := make([]int32, 2*d+3)
		for i := range snap {
			snap[i] = int32(v[off-d-1+i])
		}
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			v[off+k] = x
			work++
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
		if work > maxDiffWork {
			return nil, false
		}
	}
	return nil, false
}

// backtrack walks the trace of myers back from (n, m) and returns the
// changes along the path, merged into blocks.
func backtrack(trace [][]int32, n, m int) []block {
	var rev []block // single-line changes, last first
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		v := trace[d]
		at := func(k int) int { return int(v[k+d+1]) }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		x, y = prevX, prevY
		if prevK == k+1 {
			rev = append(rev, block{x, x, y, y + 1}) // insert b[y]
		} else {
			rev = append(rev, block{x, x + 1, y, y}) // delete a[x]
		}
	}
	var blocks []block
	for i := len(rev) - 1; i >= 0; i-- {
		c := rev[i]
		if len(blocks) > 0 {
			last := &blocks[len(blocks)-1]
			if last.a1 == c.a0 && last.b1 == c.b0 {
				last.a1, last.b1 = c.a1, c.b1
				continue
			}
		}
		blocks = append(blocks, c)
	}
	return blocks
}
