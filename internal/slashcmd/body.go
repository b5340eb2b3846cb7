package slashcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// PartKind says what a piece of a command's body is.
type PartKind int

// The kinds of part.
const (
	// Text is sent as it is.
	Text PartKind = iota
	// Shell is a !`command` marker: the command runs and its output
	// takes the marker's place.
	Shell
	// FileRef is an @path reference: the file is attached to the prompt;
	// the reference stays in the text.
	FileRef
)

// Part is a piece of a command's body as ParseBody cuts it.
type Part struct {
	Kind PartKind
	// Text is the literal text, the command line (Shell) or the path
	// without its "@" (FileRef).
	Text string
	// Raw is the part as written ("!`git status`", "@src/a.go").
	Raw string
}

// PathLike reports whether a FileRef reads as a path (it holds a "/" or
// a "."): one that names no file is an error, while a bare word such as
// "@claude" that names none is left as text.
func (p Part) PathLike() bool { return strings.ContainsAny(p.Text, "/.") }

// maxShellLine caps a !`command`'s length; a longer one stays text.
const maxShellLine = 4096

// ParseBody cuts a command's body (after argument substitution) into
// text, !`command` markers and @path references.
//
// A marker is "!" then a command between single backticks, on one line,
// where the "!" starts the text or follows a character that is not a
// letter, digit, "!" or backtick ("status: !`git status`", not
// "Hi!`x`"). A reference is "@" then a path up to the next blank, where
// the "@" starts the text or follows a blank or one of ( [ { " ' (so an
// e-mail address is none); trailing punctuation (,.;:!?)]}'") is not part
// of the path.
//
// Neither is looked for in code: inline code spans (`…`, “…“) and
// fenced code blocks (``` or ~~~) stay text. Claude Code also expands
// markers inside fences; here a fence is how a command file shows a
// command without running it.
func ParseBody(body string) []Part {
	var parts []Part
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, Part{Kind: Text, Text: text.String(), Raw: text.String()})
			text.Reset()
		}
	}
	fence := ""
	for _, line := range strings.SplitAfter(body, "\n") {
		if fence != "" {
			text.WriteString(line)
			if closesFence(line, fence) {
				fence = ""
			}
			continue
		}
		if f := opensFence(line); f != "" {
			fence = f
			text.WriteString(line)
			continue
		}
		for i := 0; i < len(line); {
			c := line[i]
			switch {
			case c == '`':
				n := run(line[i:], '`')
				end := closingRun(line[i+n:], n)
				if end < 0 {
					text.WriteString(line[i : i+n])
					i += n
					continue
				}
				text.WriteString(line[i : i+n+end+n])
				i += n + end + n
			case c == '!' && i+1 < len(line) && line[i+1] == '`' && markerStart(line, i):
				n := run(line[i+1:], '`')
				end := -1
				if n == 1 {
					end = closingRun(line[i+2:], 1)
				}
				cmd := ""
				if end >= 0 {
					cmd = strings.TrimSpace(line[i+2 : i+2+end])
				}
				if cmd == "" || len(cmd) > maxShellLine || strings.Contains(cmd, "`") {
					text.WriteByte('!')
					i++
					continue
				}
				flush()
				raw := line[i : i+2+end+1]
				parts = append(parts, Part{Kind: Shell, Text: cmd, Raw: raw})
				i += len(raw)
			case c == '@' && refStart(line, i):
				j := i + 1
				for j < len(line) && !isBlank(line[j]) {
					j++
				}
				path := strings.TrimRight(line[i+1:j], ",.;:!?)]}'\"`")
				if path == "" {
					text.WriteByte('@')
					i++
					continue
				}
				flush()
				parts = append(parts, Part{Kind: FileRef, Text: path, Raw: "@" + path})
				i += 1 + len(path)
			default:
				text.WriteByte(c)
				i++
			}
		}
	}
	flush()
	return parts
}

// opensFence returns the fence a line opens (its run of ``` or ~~~), or
// "". Up to three spaces may indent it.
func opensFence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := run(t, t[0])
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// closesFence reports whether line closes the fence: a run of its
// character at least as long, and nothing else.
func closesFence(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := run(t, fence[0])
	return n >= len(fence) && strings.TrimSpace(t[n:]) == ""
}

// run counts the bytes c that start s.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun returns where in s a run of exactly n backticks starts, or
// -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func markerStart(line string, i int) bool {
	if i == 0 {
		return true
	}
	p := line[i-1]
	return !(p == '!' || p == '`' || p == '_' || p >= '0' && p <= '9' || p >= 'a' && p <= 'z' || p >= 'A' && p <= 'Z' || p >= 0x80)
}

func refStart(line string, i int) bool {
	if i == 0 {
		return true
	}
	return isBlank(line[i-1]) || strings.IndexByte("([{\"'", line[i-1]) >= 0
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Expander resolves a body's markers and references. Each function is
// called only when the body holds such a part.
type Expander struct {
	// Check decides whether a command line may run, before any runs: an
	// error refuses the whole expansion.
	Check func(ctx context.Context, line string) error
	// Run runs an allowed command line and returns the text that takes
	// its marker's place.
	Run func(ctx context.Context, line string) (string, error)
	// Attach reads a referenced file and returns the block appended to
	// the prompt and the file's path as the block names it (to attach a
	// file once). An error wrapping fs.ErrNotExist for a reference that
	// is not PathLike leaves the "@word" as text.
	Attach func(ctx context.Context, path string) (block, name string, err error)
}

// ErrRefused is matched by the error for a body whose command may not
// run or whose file may not be read: nothing ran.
var ErrRefused = errors.New("command refused")

// Expand resolves the parts of body: every command line is checked
// first, then every file is read, and only then do the commands run, so
// a refusal leaves nothing run. Commands run in order; a command's output
// and an attached file's content are not searched for markers. The
// result is the text with each marker replaced, followed by the files'
// blocks.
func (x Expander) Expand(ctx context.Context, body string) (string, error) {
	parts := ParseBody(body)
	for _, p := range parts {
		if p.Kind != Shell {
			continue
		}
		if x.Check == nil || x.Run == nil {
			return "", fmt.Errorf("%w: !`%s` cannot run here", ErrRefused, p.Text)
		}
		if err := x.Check(ctx, p.Text); err != nil {
			return "", fmt.Errorf("%w: %w", ErrRefused, err)
		}
	}
	var blocks strings.Builder
	seen := make(map[string]bool)
	for i, p := range parts {
		if p.Kind != FileRef {
			continue
		}
		if x.Attach == nil {
			return "", fmt.Errorf("%w: @%s cannot be attached here", ErrRefused, p.Text)
		}
		block, name, err := x.Attach(ctx, p.Text)
		if errors.Is(err, fs.ErrNotExist) && !p.PathLike() {
			parts[i].Kind = Text
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%w: @%s: %w", ErrRefused, p.Text, err)
		}
		if !seen[name] {
			seen[name] = true
			blocks.WriteString(block)
		}
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Kind != Shell {
			b.WriteString(p.Raw)
			continue
		}
		out, err := x.Run(ctx, p.Text)
		if err != nil {
			return "", fmt.Errorf("!`%s`: %w", p.Text, err)
		}
		b.WriteString(out)
	}
	b.WriteString(blocks.String())
	return b.String(), nil
}
