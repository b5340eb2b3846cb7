package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/tools/txtar"
)

// This file reads and writes the fixtures of testdata/fixtures; the format
// is described in testdata/fixtures/README.md, the runner is in
// fixture_test.go.

// fixture is one parsed archive: a call of one tool on a workspace, and
// what it should give.
type fixture struct {
	file string         // the archive's path, for messages
	arc  *txtar.Archive // as read; -update rewrites its want sections

	tool      string
	args      json.RawMessage // $WORK and $OUTSIDE not yet expanded
	options   map[string]int  // tool settings: max_entries=3
	engines   []string        // grep only: go, rg; empty for both
	hide      []string        // workspace paths hidden as deny rules hide them
	symlinks  []fixtureLink   // link -> target
	hardlinks []fixtureLink   // existing -> new name
	chmods    []fixtureMode   // before the call
	modes     []fixtureMode   // checked after it
	mtimes    map[string]time.Time
	errorIs   string          // a sentinel the error must match
	quoted    map[string]bool // sections written as Go strings

	ws      []fixtureEntry // the workspace before, in archive order
	outside []fixtureEntry // files in a directory outside the workspace

	wantResult *string
	wantError  *string
	after      map[string]string // workspace files changed or created
	gone       map[string]bool   // workspace files that must not exist
}

// fixtureLink is a symlink or hard link a fixture makes.
type fixtureLink struct{ from, to string }

// fixtureMode is a file's permission bits.
type fixtureMode struct {
	path string
	mode fs.FileMode
}

// fixtureEntry is a file or (dir set) a directory.
type fixtureEntry struct {
	path string
	dir  bool
	data string
}

// fixtureMTimeBase is the modification time of the first ws file; each
// next one is an hour later, so that results ordered by time are stable.
var fixtureMTimeBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// parseFixture parses the archive data read from file.
func parseFixture(file string, data []byte) (*fixture, error) {
	fx := &fixture{
		file: file, arc: txtar.Parse(data), options: map[string]int{}, mtimes: map[string]time.Time{},
		quoted: map[string]bool{}, after: map[string]string{}, gone: map[string]bool{},
	}
	if err := fx.parseHeader(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := fx.parseSections(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return fx, nil
}

// parseHeader reads the comment before the first section: lines of
// "key: value", blank lines and "#" lines of prose.
func (fx *fixture) parseHeader() error {
	for i, line := range strings.Split(string(fx.arc.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("header line %d: %q is neither \"key: value\" nor a # comment", i+1, line)
		}
		if err := fx.headerLine(strings.TrimSpace(key), strings.TrimSpace(val)); err != nil {
			return fmt.Errorf("header line %d: %s: %w", i+1, key, err)
		}
	}
	switch {
	case fx.tool == "":
		return errors.New(`the header has no "tool:" line`)
	case fixtureTools[fx.tool] == nil:
		return fmt.Errorf("unknown tool %q", fx.tool)
	case len(fx.engines) > 0 && fx.tool != "grep":
		return errors.New("engines: only grep has engines")
	}
	return nil
}

// headerLine applies one "key: value" line of the header.
func (fx *fixture) headerLine(key, val string) error {
	switch key {
	case "tool":
		if fx.tool != "" {
			return errors.New("given twice")
		}
		fx.tool = val
	case "args":
		if fx.args != nil {
			return errors.New("given twice")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(val), &obj); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		fx.args = json.RawMessage(val)
	case "option":
		name, num, ok := strings.Cut(val, "=")
		n, err := strconv.Atoi(strings.TrimSpace(num))
		if !ok || err != nil {
			return fmt.Errorf("%q is not name=integer", val)
		}
		fx.options[strings.TrimSpace(name)] = n
	case "engines":
		for e := range strings.FieldsSeq(val) {
			if e != "go" && e != "rg" {
				return fmt.Errorf("unknown grep engine %q", e)
			}
			fx.engines = append(fx.engines, e)
		}
	case "hide":
		p, err := fixturePath(val)
		if err != nil {
			return err
		}
		fx.hide = append(fx.hide, p)
	case "symlink", "hardlink":
		from, to, ok := strings.Cut(val, " -> ")
		if !ok {
			return fmt.Errorf("%q is not \"path -> target\"", val)
		}
		l := fixtureLink{strings.TrimSpace(from), strings.TrimSpace(to)}
		if key == "symlink" {
			fx.symlinks = append(fx.symlinks, l)
		} else {
			fx.hardlinks = append(fx.hardlinks, l)
		}
	case "chmod", "mode":
		i := strings.LastIndexByte(val, ' ')
		m, err := strconv.ParseUint(val[i+1:], 8, 32)
		if i < 0 || err != nil {
			return fmt.Errorf("%q is not \"path octal-mode\"", val)
		}
		fm := fixtureMode{strings.TrimSpace(val[:i]), fs.FileMode(m)}
		if key == "chmod" {
			fx.chmods = append(fx.chmods, fm)
		} else {
			fx.modes = append(fx.modes, fm)
		}
	case "mtime":
		i := strings.LastIndexByte(val, ' ')
		tm, err := time.Parse(time.RFC3339, val[i+1:])
		if i < 0 || err != nil {
			return fmt.Errorf("%q is not \"path RFC3339-time\"", val)
		}
		fx.mtimes[strings.TrimSpace(val[:i])] = tm
	case "error-is":
		if errorSentinels[val] == nil {
			return fmt.Errorf("unknown error %q", val)
		}
		fx.errorIs = val
	case "quoted":
		fx.quoted[val] = true
	default:
		return errors.New("unknown key")
	}
	return nil
}

// parseSections reads the archive's files.
func (fx *fixture) parseSections() error {
	seen := map[string]bool{}
	argStrings := map[string]string{}
	for _, f := range fx.arc.Files {
		if seen[f.Name] {
			return fmt.Errorf("section %s appears twice", f.Name)
		}
		seen[f.Name] = true
		data := string(f.Data)
		if fx.quoted[f.Name] {
			var err error
			if data, err = unquoteBody(data); err != nil {
				return fmt.Errorf("section %s: %w", f.Name, err)
			}
		}
		kind, rest, _ := strings.Cut(f.Name, "/")
		if kind == "want" {
			switch rest {
			case "result":
				fx.wantResult = &data
			case "error":
				if !fx.quoted[f.Name] {
					data = strings.TrimSuffix(data, "\n")
				}
				fx.wantError = &data
			default:
				return fmt.Errorf("unknown section %s (want/result or want/error)", f.Name)
			}
			continue
		}
		if kind == "arg" {
			if rest == "" {
				return fmt.Errorf("section %s names no argument", f.Name)
			}
			argStrings[rest] = data
			continue
		}
		dir := strings.HasSuffix(rest, "/") && kind == "ws"
		p, err := fixturePath(strings.TrimSuffix(rest, "/"))
		if err != nil {
			return fmt.Errorf("section %s: %w", f.Name, err)
		}
		switch kind {
		case "ws":
			if dir && data != "" {
				return fmt.Errorf("section %s is a directory but has content", f.Name)
			}
			fx.ws = append(fx.ws, fixtureEntry{path: p, dir: dir, data: data})
		case "outside":
			fx.outside = append(fx.outside, fixtureEntry{path: p, data: data})
		case "after":
			fx.after[p] = data
		case "gone":
			if data != "" {
				return fmt.Errorf("section %s must be empty", f.Name)
			}
			fx.gone[p] = true
		default:
			return fmt.Errorf("unknown section %s", f.Name)
		}
	}
	for name := range fx.quoted {
		if !seen[name] {
			return fmt.Errorf("quoted: there is no section %s", name)
		}
	}
	if fx.wantResult != nil && fx.wantError != nil {
		return errors.New("both want/result and want/error")
	}
	for p := range fx.after {
		if fx.gone[p] {
			return fmt.Errorf("%s is both in after/ and gone/", p)
		}
	}
	return fx.mergeArgs(argStrings)
}

// mergeArgs adds the arg/ sections to the args line as string arguments.
// Without them the args line is kept byte for byte (3.0 stays 3.0).
func (fx *fixture) mergeArgs(argStrings map[string]string) error {
	if fx.args == nil {
		fx.args = json.RawMessage(`{}`)
	}
	if len(argStrings) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(fx.args, &obj); err != nil {
		return err
	}
	for name, s := range argStrings {
		if _, ok := obj[name]; ok {
			return fmt.Errorf("argument %s is given both in args and in a section", name)
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		obj[name] = b
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	fx.args = b
	return nil
}

// fixturePath checks a workspace path of a fixture: relative, clean,
// slash-separated and inside the workspace.
func fixturePath(p string) (string, error) {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%q is not a clean relative path inside the workspace", p)
	}
	return p, nil
}

// unquoteBody decodes a quoted section: Go string literals, each
// optionally followed by "* N" to repeat it, concatenated; space and line
// ends between them are ignored.
func unquoteBody(body string) (string, error) {
	var sb strings.Builder
	rest := strings.TrimSpace(body)
	for rest != "" {
		lit, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", fmt.Errorf("not a Go string literal at %q", clipTo(rest, 40))
		}
		s, err := strconv.Unquote(lit)
		if err != nil || strings.HasPrefix(lit, "'") {
			return "", fmt.Errorf("not a Go string literal: %s", lit)
		}
		rest = strings.TrimSpace(rest[len(lit):])
		n := 1
		if after, ok := strings.CutPrefix(rest, "*"); ok {
			after = strings.TrimSpace(after)
			end := strings.IndexFunc(after, func(r rune) bool { return r < '0' || r > '9' })
			if end < 0 {
				end = len(after)
			}
			if n, err = strconv.Atoi(after[:end]); err != nil || n < 0 {
				return "", fmt.Errorf("%s * %q: the count is not a number", lit, clipTo(after, 20))
			}
			rest = strings.TrimSpace(after[end:])
		}
		sb.WriteString(strings.Repeat(s, n))
	}
	return sb.String(), nil
}

// needsQuoting reports whether text cannot be a plain section: it would
// not come back byte for byte, or would be hard to read in a diff.
func needsQuoting(text string) bool {
	if text == "" {
		return false
	}
	if !strings.HasSuffix(text, "\n") || !utf8.ValidString(text) {
		return true
	}
	for line := range strings.Lines(text) {
		if len(line) > 1000 || strings.HasPrefix(line, "-- ") && strings.HasSuffix(line, " --\n") {
			return true
		}
		for _, r := range strings.TrimSuffix(line, "\n") {
			if r < ' ' && r != '\t' || r == 0x7f || r == utf8.RuneError {
				return true
			}
		}
	}
	return false
}

// quoteBody encodes text as a quoted section: a Go string per line, and
// runs of one repeated character of 32 or more written as "c" * N.
func quoteBody(text string) string {
	var sb strings.Builder
	for line := range strings.Lines(text) {
		var parts []string
		lit := ""
		for line != "" {
			r, size := utf8.DecodeRuneInString(line)
			c := line[:size]
			if r == utf8.RuneError && size == 1 {
				c = line[:1]
			}
			n := 1
			for strings.HasPrefix(line[n*len(c):], c) {
				n++
			}
			if n >= 32 {
				if lit != "" {
					parts = append(parts, strconv.Quote(lit))
					lit = ""
				}
				parts = append(parts, fmt.Sprintf("%s * %d", strconv.Quote(c), n))
			} else {
				lit += line[:n*len(c)]
			}
			line = line[n*len(c):]
		}
		if lit != "" {
			parts = append(parts, strconv.Quote(lit))
		}
		sb.WriteString(strings.Join(parts, " ") + "\n")
	}
	return sb.String()
}

// rewrite returns the archive with its want, after and gone sections
// replaced by what a run gave, for -update. The header keeps its lines
// but for the quoted lines of the replaced sections, which are made anew.
func (fx *fixture) rewrite(o *outcome) []byte {
	replaced := func(name string) bool {
		kind, _, _ := strings.Cut(name, "/")
		return kind == "want" || kind == "after" || kind == "gone"
	}
	var header []string
	for line := range strings.Lines(string(fx.arc.Comment)) {
		key, val, _ := strings.Cut(line, ":")
		if strings.TrimSpace(key) == "quoted" && replaced(strings.TrimSpace(val)) {
			continue
		}
		header = append(header, line)
	}
	var files []txtar.File
	for _, f := range fx.arc.Files {
		if !replaced(f.Name) {
			files = append(files, f)
		}
	}
	add := func(name, text string, plainError bool) {
		if needsQuoting(text) && !(plainError && !needsQuoting(text+"\n")) {
			header = append(header, "quoted: "+name+"\n")
			text = quoteBody(text)
		} else if plainError {
			text += "\n"
		}
		files = append(files, txtar.File{Name: name, Data: []byte(text)})
	}
	if o.callErr != nil {
		add("want/error", o.errText, true)
	} else {
		add("want/result", o.result, false)
	}
	for _, p := range slices.Sorted(maps.Keys(o.after)) {
		add("after/"+p, o.after[p], false)
	}
	for _, p := range o.gone {
		files = append(files, txtar.File{Name: "gone/" + p})
	}
	return txtar.Format(&txtar.Archive{Comment: []byte(strings.Join(header, "")), Files: files})
}

// clipTo shortens s to n bytes for a message.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
