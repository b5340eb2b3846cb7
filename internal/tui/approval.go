package tui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/patch"
	"github.com/mx-claw/mx-claw/internal/protocol"
)

// An approval shows exactly what would happen: the whole command, or the
// change as a diff of the file as it is now, with line numbers and a few
// lines of context. Long lines wrap rather than being cut. The live area
// shows the start of it; e prints all of it above, to read (and scroll)
// before answering.

// approvalContext is how many unchanged lines surround a change.
const approvalContext = 3

// maxPreviewFile bounds how much of a file an approval preview reads.
const maxPreviewFile = 1 << 20

// previewLine is one line of an approval's detail: a file line (with its
// number and its mark: ' ', '+' or '-') or plain text.
type previewLine struct {
	mark byte
	num  int
	text string
}

// approvalDetailLines returns the lines of what an approval is about.
func approvalDetailLines(root, tool string, args json.RawMessage) []previewLine {
	var a map[string]any
	if json.Unmarshal(args, &a) != nil {
		return textLines(string(args))
	}
	str := func(k string) string { s, _ := a[k].(string); return s }
	switch {
	case str("command") != "":
		return textLines("$ " + str("command"))
	case str("patch") != "":
		return diffPreview(str("patch"), false)
	case tool == "edit_file" || tool == "write_file":
		path := str("path")
		old, exists := readPreviewFile(root, path)
		var updated string
		if tool == "write_file" {
			updated = str("content")
		} else {
			all, _ := a["replace_all"].(bool)
			if !exists || !strings.Contains(old, str("old_string")) || str("old_string") == "" {
				return editWithoutFile(path, str("old_string"), str("new_string"))
			}
			if all {
				updated = strings.ReplaceAll(old, str("old_string"), str("new_string"))
			} else {
				updated = strings.Replace(old, str("old_string"), str("new_string"), 1)
			}
		}
		oldLabel := "a/" + path
		if !exists {
			oldLabel = "/dev/null"
		}
		d := patch.Unified(oldLabel, "b/"+path, old, updated, approvalContext)
		if d == "" {
			return textLines(path + ": no change")
		}
		return diffPreview(d, true)
	}
	pretty, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return textLines(string(args))
	}
	return textLines(string(pretty))
}

// readPreviewFile reads a workspace file for a preview; false if it is
// not there (or not readable, or outside the workspace).
func readPreviewFile(root, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(root, filepath.FromSlash(path))
	}
	if !inside(root, filepath.Clean(full)) {
		return "", false
	}
	f, err := os.Open(full)
	if err != nil {
		return "", false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPreviewFile))
	if err != nil {
		return "", false
	}
	return string(data), true
}

// editWithoutFile shows an edit whose file or text could not be found, as
// the text replaced and the text put in (the tool will say what is wrong).
func editWithoutFile(path, old, new string) []previewLine {
	out := []previewLine{{text: path}}
	for _, l := range strings.Split(old, "\n") {
		out = append(out, previewLine{mark: '-', text: l})
	}
	for _, l := range strings.Split(new, "\n") {
		out = append(out, previewLine{mark: '+', text: l})
	}
	return out
}

// textLines splits text into plain lines.
func textLines(s string) []previewLine {
	var out []previewLine
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, previewLine{text: l})
	}
	return out
}

// diffPreview turns a unified diff (or an apply_patch patch) into lines;
// with numbered, hunk headers give the file lines their numbers.
func diffPreview(d string, numbered bool) []previewLine {
	var out []previewLine
	oldNo, newNo := 0, 0
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			continue
		case strings.HasPrefix(l, "+++ "):
			out = append(out, previewLine{text: strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")})
		case strings.HasPrefix(l, "@@"):
			if numbered {
				oldNo, newNo = hunkStarts(l)
				if len(out) > 1 {
					out = append(out, previewLine{text: "  ⋮"})
				}
				continue
			}
			out = append(out, previewLine{text: l})
		case strings.HasPrefix(l, `\ `):
			out = append(out, previewLine{text: l})
		case numbered && l != "" && (l[0] == ' ' || l[0] == '+' || l[0] == '-'):
			p := previewLine{mark: l[0], text: l[1:]}
			switch l[0] {
			case ' ':
				p.num = newNo
				oldNo++
				newNo++
			case '-':
				p.num = oldNo
				oldNo++
			case '+':
				p.num = newNo
				newNo++
			}
			out = append(out, p)
		case l != "" && (l[0] == '+' || l[0] == '-'):
			out = append(out, previewLine{mark: l[0], text: l[1:]})
		default:
			out = append(out, previewLine{text: l})
		}
	}
	return out
}

// hunkStarts returns the first old and new line numbers of a hunk header
// "@@ -a,b +c,d @@".
func hunkStarts(h string) (int, int) {
	f := strings.Fields(h)
	if len(f) < 3 {
		return 0, 0
	}
	num := func(s string) int {
		s = strings.TrimLeft(s, "-+")
		s, _, _ = strings.Cut(s, ",")
		n, _ := strconv.Atoi(s)
		return max(n, 1)
	}
	return num(f[1]), num(f[2])
}

// renderPreview renders preview lines to width w: numbered lines get a
// gutter, long lines wrap under their text, changes are coloured.
func (m *Model) renderPreview(lines []previewLine, w int) []string {
	numW := 0
	for _, p := range lines {
		if p.num > 0 {
			numW = max(numW, len(strconv.Itoa(p.num)))
		}
	}
	var out []string
	for _, p := range lines {
		text := clean(p.text)
		gutter := ""
		switch {
		case p.num > 0:
			gutter = fmt.Sprintf("%*d %c ", numW, p.num, p.mark)
		case p.mark != 0:
			gutter = string(p.mark) + " "
		}
		gw := ansi.StringWidth(gutter)
		body := strings.Split(ansi.Hardwrap(text, max(w-gw, 8), true), "\n")
		for i, b := range body {
			g := gutter
			if i > 0 {
				g = strings.Repeat(" ", gw)
			}
			l := g + b
			switch p.mark {
			case '+':
				l = m.th.add.Render(l)
			case '-':
				l = m.th.del.Render(l)
			default:
				if p.num > 0 {
					l = m.th.dim.Render(l)
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// approvalPreview returns the rendered detail of an approval at width w,
// computed once per approval and width.
func (m *Model) approvalPreview(a protocol.Event, w int) []string {
	key := a.RequestID + "\x00" + strconv.Itoa(w)
	if m.previewKey != key {
		m.previewKey = key
		m.preview = m.renderPreview(approvalDetailLines(m.backend.Workspace(), a.ToolName, a.Arguments), w)
	}
	return m.preview
}

// expandApproval prints the whole detail of the approval shown above the
// live area, where it can be read and scrolled before answering.
func (m *Model) expandApproval() {
	a := m.approvals[0]
	lines := m.renderPreview(approvalDetailLines(m.backend.Workspace(), a.ToolName, a.Arguments), max(m.width-4, 20))
	m.print(m.th.warn.Render("╭ ") + m.th.bold.Render(oneLine(clean(a.Summary), m.width-4)))
	for i := range lines {
		lines[i] = m.th.warn.Render("│ ") + lines[i]
	}
	m.print(lines...)
	m.print(m.th.warn.Render("╰ ") + m.th.dim.Render("(in full; answer below)"))
	m.expanded = a.RequestID
}
