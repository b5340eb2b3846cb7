package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/execx"
	"github.com/mx-claw/mx-claw/internal/ignore"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed grep.md
var grepDescription string

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {
      "type": "string",
      "minLength": 1,
      "description": "The regular expression to search for (Go RE2 syntax), matched against each line."
    },
    "path": {
      "type": "string",
      "description": "The file or directory to search, relative to the workspace root (or absolute inside it). Default \".\"."
    },
    "include": {
      "type": "string",
      "description": "Only search files matching this glob: \"*.go\" matches names at any depth, a glob with / (\"src/**/*_test.go\") whole paths from the workspace root; {a,b} alternatives work (\"*.{ts,tsx}\")."
    },
    "context": {
      "type": "integer",
      "minimum": 0,
      "maximum": 10,
      "description": "Lines to show before and after each match. Default 0."
    },
    "case_insensitive": {
      "type": "boolean",
      "description": "Match letters in either case. Default false."
    },
    "max_results": {
      "type": "integer",
      "minimum": 1,
      "maximum": 1000,
      "description": "The most matching lines to show. Default 100."
    }
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// Limits of grep.
const (
	grepDefaultResults = 100
	grepMaxContext     = 10
	// grepMaxLineLen is how much of a line is shown; longer ones are cut
	// around their first match.
	grepMaxLineLen = 300
	// grepMaxBytes caps the output as a whole.
	grepMaxBytes = 100 << 10
	// grepCountLimit is how many matching lines are counted before the
	// search stops and the count of what is not shown becomes a lower
	// bound.
	grepCountLimit = 100_000
)

// grep is the grep tool. It searches with ripgrep when rg was found on
// PATH when the tool was made, and with its own Go engine otherwise (or
// when rg fails to run a search). The engines give the same results on the
// same tree, with these known differences: rg honours .gitignore files
// only inside a git repository (and also those above the workspace root
// inside it), the Go engine always honours those from the searched root
// down; rg's \w, \d, \s and \b are Unicode-aware, RE2's are ASCII; a
// pattern only rg rejects (such as \Q…\E) is run by the Go engine.
//
// The fields are settable in tests.
type grep struct {
	rg         string   // rg's path; "" for the Go engine
	rgEnv      []string // rg's environment
	goFallback bool     // run the Go engine when rg cannot run a search
	maxBytes   int
	countLimit int
}

func newGrep() *grep {
	t := &grep{
		rgEnv:      execx.Env(os.Environ(), []string{"PATH", "HOME", "LANG"}),
		goFallback: true,
		maxBytes:   grepMaxBytes,
		countLimit: grepCountLimit,
	}
	// The Go engine is the default: it needs no process per search, which
	// on a typical repository costs more than the whole search (rg takes
	// 15-20 ms to start on a small VM; the Go engine searches a few
	// thousand files in that time), and it is within 2x of rg on large
	// trees. MX_CLAW_GREP_ENGINE=rg prefers ripgrep when it is on PATH.
	if os.Getenv("MX_CLAW_GREP_ENGINE") == "rg" {
		if p, err := exec.LookPath("rg"); err == nil {
			t.rg = p
		}
	}
	return t
}

type grepArgs struct {
	Pattern         string   `json:"pattern"`
	Path            *string  `json:"path"`
	Include         string   `json:"include"`
	Context         *jsonInt `json:"context"`
	CaseInsensitive bool     `json:"case_insensitive"`
	MaxResults      *jsonInt `json:"max_results"`
}

func (a grepArgs) path() string {
	return pathOrDot(a.Path)
}

// grepInfo is what grep is to the agent; Info returns it, shared.
var grepInfo = tools.Info{Name: "grep", Description: grepDescription, Schema: json.RawMessage(grepSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*grep) Info() tools.Info { return grepInfo }
func (*grep) Summary(args json.RawMessage) string {
	var a grepArgs
	if decodeArgs(args, &a) != nil {
		return "Grep"
	}
	s := "Grep " + a.Pattern
	if p := displayPath(a.path()); p != "." {
		s += " in " + p
	}
	if a.Include != "" {
		s += " (" + a.Include + ")"
	}
	return s
}

// grepQuery is a checked grep call.
type grepQuery struct {
	pattern  string // as given
	re       *regexp.Regexp
	lit      []byte // a substring every matching line holds, or nil
	fold     bool
	include  *includeGlob
	context  int
	max      int
	noIgnore bool // the searched directory is itself ignored
	// hide reports a path (relative to the searched tree's base) to
	// leave out: a deny rule or a secret store covers it.
	hide func(rel string) bool
}

func newGrepQuery(a grepArgs) (*grepQuery, error) {
	q := &grepQuery{pattern: a.Pattern, fold: a.CaseInsensitive, max: grepDefaultResults}
	if a.Context != nil {
		q.context = min(max(int(*a.Context), 0), grepMaxContext)
	}
	if a.MaxResults != nil {
		q.max = min(max(int(*a.MaxResults), 1), 1000)
	}
	expr := a.Pattern
	if q.fold {
		expr = "(?i)" + expr
	}
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", a.Pattern, err)
	}
	if matchesNewline(parsed) {
		return nil, fmt.Errorf("regular expression %q contains a newline; grep matches one line at a time", a.Pattern)
	}
	if q.re, err = regexp.Compile(expr); err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", a.Pattern, err)
	}
	if lit := requiredLiteral(parsed.Simplify()); lit != "" {
		q.lit = []byte(lit)
	}
	if a.Include != "" {
		if q.include, err = parseInclude(a.Include); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// matchesNewline reports whether re holds a literal newline, which can
// never match within one line.
func matchesNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		return len(re.Rune) == 2 && re.Rune[0] == '\n' && re.Rune[1] == '\n'
	}
	return slices.ContainsFunc(re.Sub, matchesNewline)
}

// hitLine is a line to show: a match or a context line.
type hitLine struct {
	num   int
	text  string // as shown: cut to grepMaxLineLen, valid UTF-8
	cut   bool
	match bool
}

// fileHits is what one file contributed: its matching lines (at most max
// of them, with their context) and how many there are.
type fileHits struct {
	path    string // relative to the searched tree's base, slash-separated
	lines   []hitLine
	matches int // matching lines in the file, held or not
	held    int // matching lines in lines
	max     int
	done    bool // lines holds all it will; later matches are only counted
}

func (f *fileHits) addMatch(num int, text string, cut bool) {
	f.matches++
	if f.done {
		return
	}
	if f.held == f.max {
		f.done = true
		return
	}
	f.lines = append(f.lines, hitLine{num: num, text: text, cut: cut, match: true})
	f.held++
}

func (f *fileHits) addContext(num int, text string, cut bool) {
	if !f.done {
		f.lines = append(f.lines, hitLine{num: num, text: text, cut: cut})
	}
}

// collector gathers the files with matches, which the engines find in any
// order, and keeps those the output will show: the first by path whose
// matches reach max. The result does not depend on the order files come
// in, unless the search is stopped at the count limit.
//
// A collector is safe for concurrent use.
type collector struct {
	max   int
	limit int
	hide  func(rel string) bool // paths never kept or counted; may be nil

	mu         sync.Mutex
	files      []*fileHits // kept, sorted by path
	held       int         // matching lines held by files
	total      int         // matching lines seen
	totalFiles int         // files with matching lines seen
	stopped    bool        // the count limit was reached
}

func newCollector(q *grepQuery, limit int) *collector {
	return &collector{max: q.max, limit: limit, hide: q.hide}
}

// full reports whether a file at p can no longer be shown, so its lines
// need only be counted.
func (c *collector) full(p string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held >= c.max && p > c.files[len(c.files)-1].path
}

// isStopped reports whether the count limit was reached.
func (c *collector) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// add records a file's hits and reports whether to stop searching.
func (c *collector) add(f *fileHits) (stop bool) {
	if f.matches == 0 || c.hide != nil && c.hide(f.path) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += f.matches
	c.totalFiles++
	if f.held > 0 {
		i, _ := slices.BinarySearchFunc(c.files, f.path, func(x *fileHits, p string) int {
			return strings.Compare(x.path, p)
		})
		c.files = slices.Insert(c.files, i, f)
		c.held += f.held
		for n := len(c.files); n > 1 && c.held-c.files[n-1].held >= c.max; n-- {
			c.held -= c.files[n-1].held
			c.files[n-1] = nil
			c.files = c.files[:n-1]
		}
	}
	if c.total > c.limit {
		c.stopped = true
	}
	return c.stopped
}

func (t *grep) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a grepArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	q, err := newGrepQuery(a)
	if err != nil {
		return tools.Result{}, err
	}
	d, err := openSearchDir(ws, a.path(), "grep")
	if err != nil {
		return tools.Result{}, err
	}
	defer d.close()
	if d.isDir {
		q.noIgnore = d.sub != "." && ignore.NewFS(d.root.FS()).Match(d.sub, true)
	} else if err := checkText(d); err != nil {
		return tools.Result{}, err
	}

	// Files a deny rule or a secret store covers are left out, whichever
	// engine finds them.
	q.hide = func(rel string) bool { return env.IsHidden(d.abs(rel)) }
	c := newCollector(q, t.countLimit)
	if t.rg != "" {
		err = t.searchRG(ctx, q, d, c)
		if errors.Is(err, errRGUnusable) && t.goFallback {
			c = newCollector(q, t.countLimit)
			err = t.searchGo(ctx, q, d, c)
		}
	} else {
		err = t.searchGo(ctx, q, d, c)
	}
	if ctx.Err() != nil {
		return tools.Result{}, ctx.Err()
	}
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: t.render(q, d, c)}, nil
}

// checkText refuses to grep a binary file named as path.
func checkText(d *searchDir) error {
	f, err := d.root.Open(d.sub)
	if err != nil {
		return pathError(d.rel, err)
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return pathError(d.rel, err)
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fmt.Errorf("%s is a binary file (looks like %s); grep only searches text",
			d.rel, guessFileType(head[:n], path.Base(d.sub)))
	}
	return nil
}

// pathError is an error reading the file shown as rel.
func pathError(rel string, err error) error {
	return fmt.Errorf("read %s: %w", rel, unwrapPath(err))
}

// render prints the kept hits grep-style and notes what was left out.
func (t *grep) render(q *grepQuery, d *searchDir, c *collector) string {
	if c.total == 0 {
		return noGrepMatches(q, d)
	}
	var (
		out       []byte
		shown     int  // matching lines shown
		fullFiles int  // files whose matches are all shown
		capped    bool // stopped by the byte cap
		cut       bool // some line shown was cut
		prevPath  string
		prevNum   int
	)
	write := func(f *fileHits, l hitLine) {
		if q.context > 0 && prevPath != "" && (prevPath != f.path || l.num != prevNum+1) {
			out = append(out, "--\n"...)
		}
		sep := byte('-')
		if l.match {
			sep = ':'
		}
		out = append(out, d.display(f.path)...)
		out = append(out, sep)
		out = fmt.Appendf(out, "%d", l.num)
		out = append(out, sep)
		out = append(out, l.text...)
		out = append(out, '\n')
		prevPath, prevNum = f.path, l.num
		cut = cut || l.cut
	}
files:
	for _, f := range c.files {
		inFile, last := 0, -1
		var pending []hitLine // context lines before the next match
		for _, l := range f.lines {
			if !l.match {
				if last >= 0 && l.num <= last+q.context {
					write(f, l)
				} else {
					pending = append(pending, l)
				}
				continue
			}
			if shown == q.max {
				break files
			}
			if len(out) >= t.maxBytes {
				capped = true
				break files
			}
			for _, p := range pending {
				write(f, p)
			}
			pending = pending[:0]
			write(f, l)
			shown++
			inFile++
			last = l.num
		}
		if inFile == f.matches {
			fullFiles++
		}
	}

	sb := strings.Builder{}
	sb.Write(out)
	if more := c.total - shown; more > 0 || c.stopped {
		atLeast := ""
		if c.stopped {
			atLeast = "at least "
		}
		files := c.totalFiles - fullFiles
		fmt.Fprintf(&sb, "[… %s%d more %s in %s%d %s not shown", atLeast, more, plural(more, "match", "matches"),
			atLeast, files, plural(files, "file", "files"))
		switch {
		case c.stopped:
			fmt.Fprintf(&sb, " (the search stopped after %d matching lines)", c.total)
		case capped:
			fmt.Fprintf(&sb, " (the output is capped at %s)", humanSize(int64(t.maxBytes)))
		}
		sb.WriteString("; narrow the search with a more specific pattern, path or include.]\n")
	}
	if cut {
		fmt.Fprintf(&sb, "[Lines longer than %d bytes are cut short; … marks where.]\n", grepMaxLineLen)
	}
	return sb.String()
}

// noGrepMatches is grep's answer when nothing matches.
func noGrepMatches(q *grepQuery, d *searchDir) string {
	msg := fmt.Sprintf("No matches for `%s` in %s", q.pattern, placeName(d.rel))
	if q.include != nil {
		msg += fmt.Sprintf(" (files matching `%s`)", q.include.glob)
	}
	msg += "."
	if d.isDir {
		msg += " Hidden files, binary files and files ignored by .gitignore were not searched."
	}
	return msg
}

// clipLine returns line (without its line end) as shown: valid UTF-8, at
// most grepMaxLineLen bytes, with "…" where it was cut. at is the byte
// offset of the first match, which is kept in view, or -1.
func clipLine(line []byte, at int) (string, bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) <= grepMaxLineLen {
		return validUTF8(line), false
	}
	start := 0
	if at > grepMaxLineLen-grepMaxLineLen/3 {
		start = min(at-grepMaxLineLen/3, len(line)-grepMaxLineLen)
		for start < len(line) && !utf8.RuneStart(line[start]) {
			start++
		}
	}
	end := min(start+grepMaxLineLen, len(line))
	for end < len(line) && end > start && !utf8.RuneStart(line[end]) {
		end--
	}
	var sb strings.Builder
	if start > 0 {
		sb.WriteString("…")
	}
	sb.WriteString(validUTF8(line[start:end]))
	if end < len(line) {
		sb.WriteString("…")
	}
	return sb.String(), true
}

// validUTF8 returns b as a string with invalid bytes shown as U+FFFD.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
