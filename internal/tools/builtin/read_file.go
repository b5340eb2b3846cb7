package builtin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mx-claw/mx-claw/internal/images"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed read_file.md
var readFileDescription string

const readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file to read, relative to the workspace root (or absolute inside it)."
    },
    "offset": {
      "type": "integer",
      "minimum": 1,
      "description": "The 1-based line number to start at. Default 1."
    },
    "limit": {
      "type": "integer",
      "minimum": 1,
      "description": "The number of lines to read. Default up to 2000."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`

// Defaults of read_file.
const (
	readMaxLines = 2000
	readMaxBytes = 256 << 10
	// sniffLen is how much of a file is checked for NUL bytes.
	sniffLen = 8 << 10
	// maxSuggestions is how many similar names a not-found error offers.
	maxSuggestions = 3
	// maxSuggestScan bounds the directory size searched for suggestions.
	maxSuggestScan = 10000
)

// readFile is the read_file tool. Its fields are the caps, settable in
// tests.
type readFile struct {
	maxLines int // lines shown when the call gives no limit
	maxBytes int // bytes of numbered output at most
}

func newReadFile() *readFile {
	return &readFile{maxLines: readMaxLines, maxBytes: readMaxBytes}
}

type readFileArgs struct {
	Path   string   `json:"path"`
	Offset *jsonInt `json:"offset"`
	Limit  *jsonInt `json:"limit"`
}

// readFileInfo is what read_file is to the agent; Info returns it, shared.
var readFileInfo = tools.Info{Name: "read_file", Description: readFileDescription, Schema: json.RawMessage(readFileSchema),
	Risk: tools.RiskRead, ConcurrencySafe: true}

func (*readFile) Info() tools.Info { return readFileInfo }
func (*readFile) Summary(args json.RawMessage) string {
	var a readFileArgs
	if decodeArgs(args, &a) != nil {
		return "Read file"
	}
	return "Read " + displayPath(a.Path)
}

func (t *readFile) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a readFileArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	abs, rel, err := ws.Resolve(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	fi, err := ws.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Result{}, notFound(ws, abs, rel)
	case err != nil:
		return tools.Result{}, err
	case fi.IsDir():
		return tools.Result{}, fmt.Errorf("%s is a directory, not a file; use list_dir to see what it contains", rel)
	case !fi.Mode().IsRegular():
		return tools.Result{}, fmt.Errorf("%s is not a regular file (%s)", rel, fi.Mode().Type())
	}

	f, fromEditor, err := tools.OpenText(ctx, env, ws, abs)
	if err != nil {
		return tools.Result{}, err
	}
	defer f.Close()
	// The guard knows an editor's buffer by its contents alone.
	guardFI := fi
	if fromEditor {
		guardFI = nil
	}

	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return tools.Result{}, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
	head = head[:n]
	if n == 0 {
		if env.Files != nil {
			env.Files.RecordRead(abs, nil, guardFI)
		}
		return tools.Result{Content: fmt.Sprintf("%s is empty (0 bytes).", rel)}, nil
	}
	if images.Sniff(head) != "" {
		if res, ok, err := readImage(env, head, f, rel, fi.Size()); ok {
			return res, err
		}
	}
	if bytes.IndexByte(head, 0) >= 0 {
		kind := guessFileType(head, filepath.Base(abs))
		if kind == utf16Text {
			return tools.Result{}, fmt.Errorf("%s is UTF-16 text (%s); read_file only shows UTF-8 text, "+
				"so convert it first (iconv -f UTF-16 -t UTF-8)", rel, humanSize(fi.Size()))
		}
		return tools.Result{}, fmt.Errorf("%s is a binary file (%s, looks like %s); read_file only shows text",
			rel, humanSize(fi.Size()), kind)
	}

	// The reader reads the whole file (it counts the lines after the
	// window), so hashing what passes through it fingerprints the file
	// for the read-before-write guard.
	var rest io.Reader = f
	var sum hash.Hash
	if env.Files != nil {
		sum = sha256.New()
		sum.Write(head)
		rest = io.TeeReader(f, sum)
	}
	r := lineReader{
		br:       bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), rest), 64<<10),
		start:    1,
		limit:    t.maxLines,
		maxBytes: t.maxBytes,
	}
	if a.Offset != nil {
		r.start = int(*a.Offset)
	}
	if a.Limit != nil {
		r.limit = int(*a.Limit)
	}
	if err := r.run(ctx); err != nil {
		return tools.Result{}, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
	if r.first == 0 {
		return tools.Result{}, fmt.Errorf("offset %d is past the end of %s, which has %d lines", r.start, rel, r.total)
	}
	if sum != nil {
		env.Files.RecordReadSum(abs, [sha256.Size]byte(sum.Sum(nil)), guardFI)
	}
	return tools.Result{Content: r.render()}, nil
}

// lineReader reads a file's lines, numbering and collecting those in the
// requested window until a cap is hit, then counts the rest.
type lineReader struct {
	br       *bufio.Reader
	start    int // first line to show (1-based)
	limit    int // most lines to show
	maxBytes int // most bytes of numbered output

	out          strings.Builder
	first, last  int  // lines shown; first is 0 if none
	total        int  // lines in the file
	byBytes      bool // stopped showing because of maxBytes
	cutLine      int  // a line cut short because it alone passed maxBytes
	cutLineLen   int  // its length
	cutLineShown int  // how much of it is shown
	invalidUTF8  bool
	crlf         bool
}

func (r *lineReader) run(ctx context.Context) error {
	var buf []byte
	stopped := false
	for lineNo := 1; ; lineNo++ {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if stopped {
			rest, err := countLines(ctx, r.br)
			r.total = lineNo - 1 + rest
			return err
		}
		showing := lineNo >= r.start
		keep := 0
		if showing {
			// Room for the line itself: "\r\n" is dropped and the number and
			// tab are added, so this slightly overshoots, which is fine.
			keep = r.maxBytes - r.out.Len() + 2
		}
		var n int
		var err error
		buf, n, err = readLine(r.br, max(keep, 0), buf)
		if n == 0 && errors.Is(err, io.EOF) {
			r.total = lineNo - 1
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if showing {
			stopped = r.show(lineNo, buf, n)
		}
		if errors.Is(err, io.EOF) {
			r.total = lineNo
			return nil
		}
	}
}

// show adds line lineNo (buf holds its first bytes, n is its full length
// including the newline) to the output and reports whether to stop.
func (r *lineReader) show(lineNo int, buf []byte, n int) (stop bool) {
	line := buf
	whole := len(buf) == n
	if whole {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if l, ok := bytes.CutSuffix(line, []byte("\r")); ok {
			line = l
			r.crlf = true
		}
	} else {
		line = trimPartialRune(line)
	}
	if !utf8.Valid(line) {
		r.invalidUTF8 = true
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	prefix := fmt.Sprintf("%6d\t", lineNo)
	// A line readLine cut short did not fit by construction.
	fits := whole && r.out.Len()+len(prefix)+len(line)+1 <= r.maxBytes
	if !fits {
		r.byBytes = true
		if r.first != 0 {
			return true // the next call starts at this line
		}
		// The first line to show is over the cap on its own: show what
		// fits of it rather than nothing.
		room := max(r.maxBytes-len(prefix)-1, 0)
		line = trimPartialRune(line[:min(room, len(line))])
		r.cutLine, r.cutLineLen, r.cutLineShown = lineNo, n, len(line)
	}
	r.out.WriteString(prefix)
	r.out.Write(line)
	r.out.WriteByte('\n')
	if r.first == 0 {
		r.first = lineNo
	}
	r.last = lineNo
	return !fits || r.last-r.first+1 >= r.limit
}

// render returns the numbered lines with notes on what was left out.
func (r *lineReader) render() string {
	var sb strings.Builder
	sb.WriteString(r.out.String())
	if r.cutLine != 0 {
		fmt.Fprintf(&sb, "[… line %d is %s long; only its first %d bytes are shown.]\n",
			r.cutLine, humanSize(int64(r.cutLineLen)), r.cutLineShown)
	}
	if r.last < r.total {
		capNote := ""
		if r.byBytes {
			capNote = fmt.Sprintf(" (output is capped at %s)", humanSize(int64(r.maxBytes)))
		}
		fmt.Fprintf(&sb, "[… file has %d lines; showing %d–%d%s. Call read_file with offset %d to continue.]\n",
			r.total, r.first, r.last, capNote, r.last+1)
	}
	if r.invalidUTF8 {
		sb.WriteString("[Note: the file is not valid UTF-8; invalid bytes are shown as U+FFFD.]\n")
	}
	if r.crlf {
		sb.WriteString("[Note: the file has CRLF line endings; the CRs are not shown.]\n")
	}
	return sb.String()
}

// readLine reads one line from br, newline included, keeping at most keep
// bytes of it in buf (reused) and reading past the rest. n is the line's
// full length; err is io.EOF for a last line without a newline (n > 0) or
// for no line at all (n == 0).
func readLine(br *bufio.Reader, keep int, buf []byte) (line []byte, n int, err error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if room := keep - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, n, err
	}
}

// countLines counts the lines left in br, a last line without a newline
// included.
func countLines(ctx context.Context, br *bufio.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	lines := 0
	var last byte = '\n'
	for {
		if ctx.Err() != nil {
			return lines, ctx.Err()
		}
		n, err := br.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				lines++
			}
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b,
// left there by cutting b short.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if !utf8.RuneStart(c) {
			continue
		}
		if !utf8.FullRune(b[len(b)-i:]) {
			return b[:len(b)-i]
		}
		break
	}
	return b
}

// unwrapPath drops the path an *fs.PathError carries (an absolute one), as
// callers name the file themselves.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// notFound builds the error for a missing file: its path and up to three
// similar names in the same directory.
func notFound(ws *tools.Workspace, abs, rel string) error {
	dirAbs, name := filepath.Split(abs)
	dirRel := "."
	if i := strings.LastIndexAny(rel, "/"+string(filepath.Separator)); i >= 0 {
		dirRel = rel[:max(i, 1)]
	}
	entries, err := ws.ReadDir(dirAbs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("file not found: %s (directory %s does not exist either)", rel, dirRel)
		}
		return fmt.Errorf("file not found: %s", rel)
	}
	if len(entries) > maxSuggestScan {
		return fmt.Errorf("file not found: %s", rel)
	}
	for _, e := range entries {
		if e.Name() == name && e.Type()&fs.ModeSymlink != 0 {
			target, err := ws.Readlink(abs)
			if err == nil {
				return fmt.Errorf("file not found: %s is a symlink to %s, which does not exist", rel, target)
			}
		}
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sugg := similarNames(name, names, maxSuggestions)
	if len(sugg) == 0 {
		return fmt.Errorf("file not found: %s", rel)
	}
	for i, s := range sugg {
		sugg[i] = joinDisplay(dirRel, s)
	}
	return fmt.Errorf("file not found: %s (did you mean %s?)", rel, strings.Join(sugg, ", "))
}

// similarNames returns up to n of names that look like a misspelling of
// name: the same name in another case first, then the same name with
// another extension, then names sharing a prefix of at least three bytes
// and half the name (longest shared prefix first).
func similarNames(name string, names []string, n int) []string {
	type cand struct {
		name   string
		class  int
		prefix int
	}
	lname := strings.ToLower(name)
	stem := strings.TrimSuffix(lname, filepath.Ext(lname))
	var cs []cand
	for _, other := range names {
		if other == name {
			continue
		}
		lo := strings.ToLower(other)
		ostem := strings.TrimSuffix(lo, filepath.Ext(lo))
		p := commonPrefix(lname, lo)
		switch {
		case lo == lname:
			cs = append(cs, cand{other, 0, p})
		case ostem == stem && stem != "":
			cs = append(cs, cand{other, 1, p})
		case p >= 3 && p*2 >= min(len(stem), len(ostem)):
			cs = append(cs, cand{other, 2, p})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.class != b.class {
			return a.class - b.class
		}
		if a.prefix != b.prefix {
			return b.prefix - a.prefix
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, n)
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
