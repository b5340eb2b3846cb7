package patch

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Markers of the apply_patch format.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File:"
	updateMarker = "*** Update File:"
	deleteMarker = "*** Delete File:"
	moveMarker   = "*** Move to:"
	eofMarker    = "*** End of File"
)

// Kind is what a file operation does.
type Kind int

// The kinds of file operation.
const (
	Add Kind = iota + 1
	Update
	Delete
)

// String returns "add", "update" or "delete".
func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// LineKind is the role of one line of a hunk, named by its prefix.
type LineKind byte

// The kinds of hunk line.
const (
	LineContext LineKind = ' '
	LineRemoved LineKind = '-'
	LineAdded   LineKind = '+'
)

// Line is one line of a hunk, without its prefix and line ending.
type Line struct {
	// Kind says whether the line is kept, removed or added.
	Kind LineKind
	// Text is the line without its prefix.
	Text string
}

// Hunk is one change to a file: the lines it expects (context and removed
// lines, in order) are replaced by the lines it leaves (context and added
// lines, in order).
type Hunk struct {
	// Context holds the texts of the hunk's @@ lines ("@@ func main() {"
	// gives "func main() {"), in order. Each is searched for after the
	// previous one, and the hunk's lines after the last, which tells
	// apart code that repeats in a file. Bare "@@" lines add nothing.
	Context []string
	// Lines are the hunk's lines in patch order.
	Lines []Line
	// EOF is set by "*** End of File": the hunk's lines end the file.
	EOF bool
	// Line is the 1-based line of the patch text the hunk starts on.
	Line int
}

// Old returns the lines the hunk expects in the file: its context and
// removed lines.
func (h Hunk) Old() []string {
	var out []string
	for _, l := range h.Lines {
		if l.Kind != LineAdded {
			out = append(out, l.Text)
		}
	}
	return out
}

// New returns the lines the hunk leaves in the file: its context and added
// lines.
func (h Hunk) New() []string {
	var out []string
	for _, l := range h.Lines {
		if l.Kind != LineRemoved {
			out = append(out, l.Text)
		}
	}
	return out
}

// FileOp is one operation of a patch on one file.
type FileOp struct {
	// Kind is what the operation does.
	Kind Kind
	// Path is the file, as written in the patch.
	Path string
	// MoveTo is where an update moves the file ("*** Move to:"), or "".
	MoveTo string
	// Lines is the content of an added file, without the "+" prefixes.
	Lines []string
	// Hunks are the changes of an update, in file order.
	Hunks []Hunk
	// Line is the 1-based line of the patch text the operation starts on.
	Line int
}

// Content returns the content of an added file: its lines, each ended by
// "\n" ("" for none).
func (op FileOp) Content() string {
	if len(op.Lines) == 0 {
		return ""
	}
	return strings.Join(op.Lines, "\n") + "\n"
}

// Patch is a parsed apply_patch text.
type Patch struct {
	// Ops are the file operations in patch order; there is at least one.
	Ops []FileOp
}

// ParseError reports patch text that is not in the apply_patch format.
type ParseError struct {
	// Line is the 1-based line of the patch text the problem is on.
	Line int
	// Msg says what was expected and what was found.
	Msg string
}

// Error returns "line N: <what was expected>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Parse parses patch text in the apply_patch format (see the package
// documentation for the format and the slips it forgives). Errors are
// [*ParseError]s naming the line and what was expected there.
func Parse(text string) (*Patch, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	begin, end, err := envelope(lines)
	if err != nil {
		return nil, err
	}
	p := &parser{lines: lines, i: begin + 1, end: end}
	ops, err := p.ops()
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, &ParseError{Line: end + 1, Msg: fmt.Sprintf(
			"the patch has no file operations; expected %q, %q or %q before %q",
			addMarker+" path", updateMarker+" path", deleteMarker+" path", endMarker)}
	}
	return &Patch{Ops: ops}, nil
}

// heredocRE matches the first line of a heredoc some models wrap the patch
// in: "<<'EOF'", "<<EOF", `<<"EOF"`, "apply_patch <<'EOF'".
// It is compiled on first use: every start of mx-claw would pay for it.
var heredocRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[\w./-]+\s+)?<<-?\s*(['"]?)(\w+)(['"]?)$`)
})

// envelope finds the "*** Begin Patch" and "*** End Patch" lines,
// unwrapping a heredoc or Markdown fence around them and skipping blank
// lines.
func envelope(lines []string) (begin, end int, err error) {
	lo, hi := 0, len(lines)
	trim := func() {
		for lo < hi && strings.TrimSpace(lines[lo]) == "" {
			lo++
		}
		for hi > lo && strings.TrimSpace(lines[hi-1]) == "" {
			hi--
		}
	}
	trim()
	for range 2 {
		if hi-lo < 2 {
			break
		}
		first, last := strings.TrimSpace(lines[lo]), strings.TrimSpace(lines[hi-1])
		if m := heredocRE().FindStringSubmatch(first); m != nil && m[1] == m[3] && last == m[2] {
			lo, hi = lo+1, hi-1
			trim()
			continue
		}
		if strings.HasPrefix(first, "```") && last == "```" {
			lo, hi = lo+1, hi-1
			trim()
			continue
		}
		break
	}
	if lo == hi {
		return 0, 0, &ParseError{Line: 1, Msg: fmt.Sprintf("the patch is empty; expected %q", beginMarker)}
	}
	if strings.TrimSpace(lines[lo]) != beginMarker {
		return 0, 0, &ParseError{Line: lo + 1, Msg: fmt.Sprintf("expected %q, got %s", beginMarker, quote(lines[lo]))}
	}
	if hi-lo < 2 || strings.TrimSpace(lines[hi-1]) != endMarker {
		return 0, 0, &ParseError{Line: hi, Msg: fmt.Sprintf(
			"expected %q as the last line, got %s (was the patch cut off?)", endMarker, quote(lines[hi-1]))}
	}
	return lo, hi - 1, nil
}

// parser walks the lines between the envelope markers.
type parser struct {
	lines []string
	i     int // the line being looked at (0-based)
	end   int // the "*** End Patch" line
}

func (p *parser) errorf(i int, format string, args ...any) error {
	return &ParseError{Line: i + 1, Msg: fmt.Sprintf(format, args...)}
}

// ops parses file operations up to the end marker.
func (p *parser) ops() ([]FileOp, error) {
	var ops []FileOp
	for p.i < p.end {
		t := strings.TrimSpace(p.lines[p.i])
		if t == "" {
			p.i++
			continue
		}
		var op FileOp
		var err error
		if path, ok := cutMarker(t, addMarker); ok {
			op, err = p.add(path)
		} else if path, ok := cutMarker(t, updateMarker); ok {
			op, err = p.update(path)
		} else if path, ok := cutMarker(t, deleteMarker); ok {
			op, err = p.fileOp(Delete, path)
			p.i++
		} else {
			err = p.unexpected(ops)
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// unexpected is the error for a line where a file operation should start;
// it says what the previous operation allowed there, too.
func (p *parser) unexpected(ops []FileOp) error {
	line := p.lines[p.i]
	want := fmt.Sprintf("%q, %q or %q", addMarker+" path", updateMarker+" path", deleteMarker+" path")
	switch {
	case len(ops) > 0 && ops[len(ops)-1].Kind == Add:
		return p.errorf(p.i, "expected a line starting with '+' (a line of %s) or the next file operation (%s), got %s",
			ops[len(ops)-1].Path, want, quote(line))
	case strings.EqualFold(strings.TrimSpace(line), endMarker):
		return p.errorf(p.i, "%q before the last line; send one patch at a time, with nothing after its end", endMarker)
	case strings.HasPrefix(line, "***"):
		return p.errorf(p.i, "unknown marker %s; expected %s or %q", quote(line), want, endMarker)
	}
	return p.errorf(p.i, "expected a file operation (%s), got %s", want, quote(line))
}

// fileOp starts an operation on the path found after a marker.
func (p *parser) fileOp(kind Kind, path string) (FileOp, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		return FileOp{}, p.errorf(p.i, "expected a path after the %s marker", kind)
	}
	return FileOp{Kind: kind, Path: path, Line: p.i + 1}, nil
}

// add parses "*** Add File:" and the "+" lines after it. An empty line
// between "+" lines is taken as an empty line of the file (models drop the
// "+" of blank lines); blank lines after the last "+" line are skipped.
func (p *parser) add(path string) (FileOp, error) {
	op, err := p.fileOp(Add, path)
	if err != nil {
		return op, err
	}
	p.i++
	for p.i < p.end {
		l := p.lines[p.i]
		if rest, ok := strings.CutPrefix(l, "+"); ok {
			op.Lines = append(op.Lines, rest)
			p.i++
			continue
		}
		if strings.TrimSpace(l) != "" {
			break
		}
		j := p.i
		for j < p.end && strings.TrimSpace(p.lines[j]) == "" {
			j++
		}
		if j == p.end || !strings.HasPrefix(p.lines[j], "+") {
			break
		}
		for ; p.i < j; p.i++ {
			op.Lines = append(op.Lines, "")
		}
	}
	return op, nil
}

// update parses "*** Update File:", an optional "*** Move to:" and the
// hunks after them.
func (p *parser) update(path string) (FileOp, error) {
	op, err := p.fileOp(Update, path)
	if err != nil {
		return op, err
	}
	p.i++
	if p.i < p.end {
		if to, ok := cutMarker(strings.TrimSpace(p.lines[p.i]), moveMarker); ok {
			if to = strings.TrimSpace(to); to == "" {
				return op, p.errorf(p.i, "expected a path after the %q marker", moveMarker)
			}
			op.MoveTo = to
			p.i++
		}
	}
	hunks, err := p.hunks()
	if err != nil {
		return op, err
	}
	op.Hunks = hunks
	if len(hunks) == 0 && op.MoveTo == "" {
		return op, p.errorf(op.Line-1, "the update of %s has no hunks; expected a line starting with @@ after it", op.Path)
	}
	return op, nil
}

// hunks parses the hunks of an update up to the next file operation.
func (p *parser) hunks() ([]Hunk, error) {
	var hunks []Hunk
	var cur *Hunk
	blanks := 0 // empty lines seen in cur and not yet added to it
	flush := func() error {
		if cur == nil {
			return nil
		}
		if len(cur.Lines) == 0 {
			return p.errorf(cur.Line-1, "the hunk has no lines; expected lines starting with ' ', '-' or '+' after the @@ line")
		}
		hunks = append(hunks, *cur)
		cur, blanks = nil, 0
		return nil
	}
	add := func(kind LineKind, text string) {
		for ; blanks > 0; blanks-- {
			cur.Lines = append(cur.Lines, Line{Kind: LineContext})
		}
		cur.Lines = append(cur.Lines, Line{Kind: kind, Text: text})
	}

	for ; p.i < p.end; p.i++ {
		l := p.lines[p.i]
		if strings.HasPrefix(l, "***") {
			t := strings.TrimSpace(l)
			if !strings.EqualFold(t, eofMarker) {
				if isOpMarker(t) {
					break
				}
				return nil, p.unexpected(nil)
			}
			if cur == nil || len(cur.Lines) == 0 {
				return nil, p.errorf(p.i, "%q must follow the lines of a hunk", eofMarker)
			}
			cur.EOF = true
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(l, "@@") {
			ctx := hunkContext(l)
			if cur != nil && len(cur.Lines) == 0 {
				// Another @@ line right after one: a further anchor.
				if ctx != "" {
					cur.Context = append(cur.Context, ctx)
				}
				continue
			}
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &Hunk{Line: p.i + 1}
			if ctx != "" {
				cur.Context = []string{ctx}
			}
			continue
		}
		if cur == nil {
			switch {
			case strings.TrimSpace(l) == "":
				continue
			case len(hunks) == 0 && strings.ContainsAny(l[:1], " +-"):
				// Like codex, the first hunk may leave out its @@ line.
				cur = &Hunk{Line: p.i + 1}
			default:
				return nil, p.errorf(p.i, "expected a hunk starting with @@, got %s", quote(l))
			}
		}
		switch {
		case l == "":
			blanks++
		case l[0] == ' ', l[0] == '-', l[0] == '+':
			add(LineKind(l[0]), l[1:])
		case l[0] == '\\':
			// "\ No newline at end of file", copied from a unified diff.
		default:
			// A context line that lost its leading space.
			add(LineContext, l)
		}
	}
	// Empty lines after a hunk's last line separate it from what follows.
	if err := flush(); err != nil {
		return nil, err
	}
	return hunks, nil
}

// unifiedRangeRE matches the rest of a unified-diff hunk header after its
// "@@": " -12,7 +12,8 @@ func main() {".
var unifiedRangeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@(.*)$`)
})

// hunkContext returns the anchor text of an @@ line, or "" for none.
func hunkContext(l string) string {
	rest := l[2:]
	if m := unifiedRangeRE().FindStringSubmatch(rest); m != nil {
		return strings.TrimSpace(m[1])
	}
	rest = strings.TrimRight(rest, " \t")
	if r, ok := strings.CutPrefix(rest, " "); ok {
		return r
	}
	return strings.TrimSpace(rest)
}

// cutMarker reports whether t starts with marker, in any case, and returns
// the rest.
func cutMarker(t, marker string) (string, bool) {
	if len(t) < len(marker) || !strings.EqualFold(t[:len(marker)], marker) {
		return "", false
	}
	return t[len(marker):], true
}

// isOpMarker reports whether the trimmed line t starts a file operation or
// ends the patch.
func isOpMarker(t string) bool {
	for _, m := range []string{addMarker, updateMarker, deleteMarker} {
		if _, ok := cutMarker(t, m); ok {
			return true
		}
	}
	return strings.EqualFold(t, endMarker)
}

// quote quotes a line for an error message, cutting a long one short.
func quote(s string) string {
	const maxLen = 80
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}

// isRuneStart reports whether b can start a UTF-8 sequence.
func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
