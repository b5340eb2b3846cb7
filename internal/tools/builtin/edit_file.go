package builtin

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mx-claw/mx-claw/internal/patch"
	"github.com/mx-claw/mx-claw/internal/tools"
)

//go:embed edit_file.md
var editFileDescription string

const editFileSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "The file to edit, relative to the workspace root (or absolute inside it)."
    },
    "old_string": {
      "type": "string",
      "description": "The exact text to replace, whitespace and indentation included. It must occur exactly once in the file unless replace_all is true."
    },
    "new_string": {
      "type": "string",
      "description": "The text to put in its place; must differ from old_string."
    },
    "replace_all": {
      "type": "boolean",
      "description": "Replace every occurrence of old_string instead of requiring exactly one. Default false."
    }
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`

// Limits of the file-changing tools' output.
const (
	// diffContext is the number of context lines around a change in the
	// diffs they return.
	diffContext = 3
	// maxDiffBytes caps the diff returned by edit_file and write_file.
	maxDiffBytes = 16 << 10
	// maxListedLines is how many line numbers an error lists.
	maxListedLines = 10
)

// editFile is the edit_file tool.
type editFile struct{}

func newEditFile() *editFile { return &editFile{} }

type editFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// editFileInfo is what edit_file is to the agent; Info returns it, shared.
var editFileInfo = tools.Info{Name: "edit_file", Description: editFileDescription, Schema: json.RawMessage(editFileSchema),
	Risk: tools.RiskWrite, ConcurrencySafe: false}

func (*editFile) Info() tools.Info { return editFileInfo }
func (*editFile) Summary(args json.RawMessage) string {
	var a editFileArgs
	if decodeArgs(args, &a) != nil {
		return "Edit file"
	}
	s := "Edit " + displayPath(a.Path)
	if a.ReplaceAll {
		s += " (all occurrences)"
	}
	return s
}

func (*editFile) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Result, error) {
	ws, err := workspace(env)
	if err != nil {
		return tools.Result{}, err
	}
	var a editFileArgs
	if err := decodeArgs(args, &a); err != nil {
		return tools.Result{}, err
	}
	switch {
	case a.OldString == "":
		return tools.Result{}, errors.New("old_string is empty; give the exact text to replace " +
			"(to create a file or replace all of it, use write_file)")
	case a.OldString == a.NewString:
		return tools.Result{}, errors.New("old_string and new_string are the same, so there is nothing to change")
	}
	abs, rel, err := ws.ResolveForWrite(a.Path)
	if err != nil {
		return tools.Result{}, err
	}
	data, fi, err := readForEdit(ctx, env, ws, abs, rel)
	if err != nil {
		return tools.Result{}, err
	}
	content := string(data)
	m, err := matchEdit(content, a.OldString, a.NewString, a.ReplaceAll, rel)
	if err != nil {
		return tools.Result{}, err
	}
	updated := m.apply(content)
	if updated == content {
		return tools.Result{}, fmt.Errorf("the edit leaves %s as it was: old_string and new_string differ only in "+
			"line endings or a final newline, which keep the file's own (use write_file to change those)", rel)
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	updatedData := []byte(updated)
	_, viaEditor, err := tools.WriteText(ctx, env, ws, abs, updatedData, fi.Mode().Perm())
	if err != nil {
		return tools.Result{}, err
	}
	recordWrite(env, ws, abs, updatedData, viaEditor)

	var sb strings.Builder
	fmt.Fprintf(&sb, "Edited %s: %s", rel, pluralCount(len(m.offsets), "replacement"))
	if m.note != "" {
		sb.WriteString(" (" + m.note + ")")
	}
	sb.WriteString("\n\n")
	sb.WriteString(changeDiff(rel, content, updated))
	return tools.Result{Content: sb.String()}, nil
}

// readForEdit reads the existing regular file at abs for a change: it
// refuses hard-linked and binary files and files that fail the session's
// read-before-write guard.
func readForEdit(ctx context.Context, env *tools.Env, ws *tools.Workspace, abs, rel string) ([]byte, fs.FileInfo, error) {
	fi, err := ws.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("%w; only existing files can be edited (use write_file to create one)",
			notFound(ws, abs, rel))
	case err != nil:
		return nil, nil, err
	case fi.IsDir():
		return nil, nil, fmt.Errorf("%s is a directory, not a file", rel)
	case !fi.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", rel, fi.Mode().Type())
	}
	if n := hardLinks(fi); n > 1 {
		return nil, nil, fmt.Errorf("%s has %d hard links; editing it would change files outside the workspace", rel, n)
	}
	data, fromEditor, err := tools.ReadText(ctx, env, ws, abs)
	if err != nil {
		return nil, nil, err
	}
	if isBinary(data) {
		return nil, nil, fmt.Errorf("%s is a binary file (%s); only text files can be edited", rel, humanSize(int64(len(data))))
	}
	if env.Files != nil {
		// The guard knows an editor's buffer by its contents alone.
		guardFI := fi
		if fromEditor {
			guardFI = nil
		}
		if err := env.Files.Check(abs, guardFI, data); err != nil {
			return nil, nil, err
		}
	}
	return data, fi, nil
}

// editMatch is where an edit applies.
type editMatch struct {
	old, new string // as found and as written: line endings adapted to the file
	offsets  []int  // byte offsets of the occurrences to replace, ascending
	note     string // what was adapted, for the result
}

// matchEdit finds old in content: exactly, or with its line endings
// converted to the file's (CRLF for LF or back). new gets the line endings
// of the file too. Unless all is set old must occur once. Errors name the
// file as rel and say what to do.
func matchEdit(content, old, new string, all bool, rel string) (editMatch, error) {
	crlf := strings.Count(content, "\r\n")
	lf := strings.Count(content, "\n") - crlf
	type candidate struct {
		old, note string
		conv      func(string) string
	}
	// Found as it is, old's own line endings are the file's there; if it
	// has none, new gets the endings most of the file has.
	cands := []candidate{{old: old, conv: endingsOf(old)}}
	if cands[0].conv == nil {
		if crlf > lf {
			cands[0].conv = toCRLF
		} else if crlf == 0 && lf > 0 {
			cands[0].conv = toLF
		}
	}
	if crlf > 0 && toCRLF(old) != old {
		cands = append(cands, candidate{toCRLF(old), "line endings converted to CRLF to match the file", toCRLF})
	}
	if strings.Contains(old, "\r\n") {
		cands = append(cands, candidate{toLF(old), "line endings converted to LF to match the file", toLF})
	}
	for _, c := range cands {
		offsets := findAll(content, c.old)
		if len(offsets) == 0 {
			continue
		}
		if len(offsets) > 1 && !all {
			return editMatch{}, fmt.Errorf("old_string occurs %d times in %s (lines %s); "+
				"add surrounding lines to make it unique, or set replace_all",
				len(offsets), rel, listLines(lineNumbers(content, offsets)))
		}
		m := editMatch{old: c.old, new: new, offsets: offsets, note: c.note}
		if c.conv != nil {
			m.new = c.conv(new)
		}
		return m, nil
	}
	return editMatch{}, editNotFound(content, old, rel)
}

// apply replaces the matched occurrences and keeps content's final
// newline, or its absence, as it was.
func (m editMatch) apply(content string) string {
	var sb strings.Builder
	sb.Grow(len(content) + len(m.offsets)*(len(m.new)-len(m.old)))
	pos := 0
	for _, off := range m.offsets {
		sb.WriteString(content[pos:off])
		sb.WriteString(m.new)
		pos = off + len(m.old)
	}
	sb.WriteString(content[pos:])
	out := sb.String()
	switch {
	case out == "" || content == "":
	case strings.HasSuffix(content, "\n") && !strings.HasSuffix(out, "\n"):
		if strings.HasSuffix(content, "\r\n") {
			out += "\r\n"
		} else {
			out += "\n"
		}
	case !strings.HasSuffix(content, "\n") && strings.HasSuffix(out, "\n"):
		out = strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
	}
	return out
}

// findAll returns the offsets of the non-overlapping occurrences of sub in
// s, left to right.
func findAll(s, sub string) []int {
	var offsets []int
	for pos := 0; pos <= len(s); {
		i := strings.Index(s[pos:], sub)
		if i < 0 {
			break
		}
		offsets = append(offsets, pos+i)
		pos += i + len(sub)
	}
	return offsets
}

// endingsOf returns the conversion to the line endings s has, or nil if
// it has none or both kinds.
func endingsOf(s string) func(string) string {
	crlf := strings.Count(s, "\r\n")
	lf := strings.Count(s, "\n") - crlf
	switch {
	case crlf > 0 && lf == 0:
		return toCRLF
	case lf > 0 && crlf == 0:
		return toLF
	}
	return nil
}

// toLF turns CRLF line endings into LF.
func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// toCRLF turns LF line endings (not already CRLF) into CRLF.
func toCRLF(s string) string { return strings.ReplaceAll(toLF(s), "\n", "\r\n") }

// lineNumbers returns the 1-based lines of the ascending byte offsets.
func lineNumbers(content string, offsets []int) []int {
	lines := make([]int, len(offsets))
	line, pos := 1, 0
	for i, off := range offsets {
		line += strings.Count(content[pos:off], "\n")
		pos = off
		lines[i] = line
	}
	return lines
}

// listLines formats line numbers for an error: "3, 10, 12", cut short
// after maxListedLines.
func listLines(lines []int) string {
	var parts []string
	for i, l := range lines {
		if i == maxListedLines {
			parts = append(parts, fmt.Sprintf("… %d more", len(lines)-i))
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}

// editNotFound builds the error for an old_string that is not in the
// file, with the lines of a match that ignores whitespace and line
// endings, or of the old_string's first line, if there are any.
func editNotFound(content, old, rel string) error {
	if content == "" {
		return fmt.Errorf("old_string was not found: %s is empty (use write_file to give it content)", rel)
	}
	if lines := looseMatches(content, old); len(lines) > 0 {
		return fmt.Errorf("old_string was not found in %s, but it matches at line %s if whitespace and line endings "+
			"are ignored: the file has different whitespace or line endings there; read those lines again and "+
			"copy them exactly", rel, listLines(lines))
	}
	first := ""
	for _, l := range strings.Split(old, "\n") {
		if first = strings.TrimSpace(l); first != "" {
			break
		}
	}
	if first != "" && first != strings.TrimSpace(old) {
		var lines []int
		for i, l := range strings.Split(content, "\n") {
			if strings.Contains(l, first) {
				lines = append(lines, i+1)
			}
		}
		if len(lines) > 0 {
			return fmt.Errorf("old_string was not found in %s; its first line %s occurs at line %s, "+
				"but what follows differs from the file; read the file again and copy the text exactly",
				rel, strconv.Quote(first), listLines(lines))
		}
	}
	return fmt.Errorf("old_string was not found in %s; read the file again and copy the text exactly, "+
		"whitespace and indentation included", rel)
}

// looseMatches returns the lines where old occurs in content when all
// ASCII whitespace (line endings included) is ignored in both, at most
// maxListedLines+1 of them.
func looseMatches(content, old string) []int {
	squeezedOld := squeeze(old, nil)
	if squeezedOld == "" {
		return nil
	}
	var lineStarts []int // offset in the squeezed content where each line starts
	squeezed := squeeze(content, &lineStarts)
	var lines []int
	for _, off := range findAll(squeezed, squeezedOld) {
		// The line is the last one starting at or before off.
		n := sort.Search(len(lineStarts), func(i int) bool { return lineStarts[i] > off })
		if len(lines) == 0 || lines[len(lines)-1] != n {
			lines = append(lines, n)
		}
		if len(lines) > maxListedLines {
			break
		}
	}
	return lines
}

// squeeze drops ASCII whitespace from s. If lineStarts is not nil, the
// squeezed offset of each line's start is appended to it.
func squeeze(s string, lineStarts *[]int) string {
	var sb strings.Builder
	sb.Grow(len(s))
	if lineStarts != nil {
		*lineStarts = append(*lineStarts, 0)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			if lineStarts != nil {
				*lineStarts = append(*lineStarts, sb.Len())
			}
		case ' ', '\t', '\r', '\v', '\f':
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// pluralCount formats a count of things: "1 replacement", "3 replacements".
func pluralCount(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// isBinary reports whether data looks binary: a NUL byte near its start.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
}

// changeDiff returns the unified diff of a file's change for the model,
// capped at maxDiffBytes.
func changeDiff(rel, old, new string) string {
	switch {
	case old == new:
		return "The content is unchanged."
	case strings.IndexByte(old[:min(len(old), sniffLen)], 0) >= 0:
		return "(The old content was binary; no diff is shown.)"
	}
	return tools.Truncate(patch.Unified(diffLabel("a", rel), diffLabel("b", rel), old, new, diffContext), maxDiffBytes)
}

// diffLabel is the label of one side of a diff: "a/rel", or rel itself if
// it is absolute (a file in an allowed directory outside the root).
func diffLabel(side, rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return side + "/" + rel
}

// recordWrite records a file the session just wrote in its guard, if it
// has one, so its next edit needs no new read.
func recordWrite(env *tools.Env, ws *tools.Workspace, abs string, data []byte, viaEditor bool) {
	if env.Files == nil {
		return
	}
	if viaEditor {
		// The editor may not have saved it: know it by its contents.
		env.Files.RecordWrite(abs, data, nil)
		return
	}
	if fi, err := ws.Stat(abs); err == nil {
		env.Files.RecordWrite(abs, data, fi)
	}
}
