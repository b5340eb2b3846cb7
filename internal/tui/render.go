package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/mx-claw/mx-claw/internal/mdterm"
	"github.com/mx-claw/mx-claw/internal/protocol"
	"github.com/mx-claw/mx-claw/internal/termsafe"
)

// Limits of what a tool card shows; the model sees the whole result.
const (
	previewLines   = 4
	diffLines      = 40
	reasoningLines = 6
)

// clean makes untrusted text safe and measurable: escape sequences and
// control characters neutralised, tabs expanded, carriage returns dropped.
func clean(s string) string {
	s = termsafe.Sanitize(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\t", "    ")
}

// renderer turns finished things into the text printed to the scrollback.
// It is owned by the Model and used from its goroutine only.
type renderer struct {
	th    theme
	width int
	// fullReasoning shows reasoning in full instead of its first
	// reasoningLines lines (toggled with Ctrl-O).
	fullReasoning bool
}

// wrap hard-wraps every line of s (already clean) to the width.
func (r *renderer) wrap(s string) string {
	return ansi.Wrap(s, max(r.width, 10), " ")
}

// markdown renders a finished assistant message, wrapped to the width less
// two columns, after a margin of two (code blocks keep their long lines).
func (r *renderer) markdown(text string) string {
	w := max(r.width-2, 20)
	out := mdterm.Render(clean(text), w-2, r.th.md)
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// user renders a message the user sent.
func (r *renderer) user(text string) string {
	lines := strings.Split(clean(text), "\n")
	for i, l := range lines {
		p := "  "
		if i == 0 {
			p = "› "
		}
		lines[i] = r.th.user.Render(ansi.Wrap(p+l, max(r.width, 10), " "))
	}
	return strings.Join(lines, "\n")
}

// reasoning renders the model's reasoning dimmed, collapsed to its first
// lines unless r.fullReasoning (Ctrl-O) is on.
func (r *renderer) reasoning(text string) string {
	text = strings.TrimSpace(clean(text))
	if text == "" {
		return ""
	}
	lines := strings.Split(r.wrap(text), "\n")
	more := len(lines) - reasoningLines
	if more > 0 && !r.fullReasoning {
		lines = append(lines[:reasoningLines], fmt.Sprintf("… %d more lines of reasoning (Ctrl-O: in full)", more))
	}
	for i, l := range lines {
		lines[i] = r.th.dim.Render("┊ " + l)
	}
	return strings.Join(lines, "\n")
}

// toolCard renders a finished tool call: its status, summary and duration,
// a short preview of the result, and the diff of an edit.
func (r *renderer) toolCard(ev protocol.Event) string {
	ok := ev.OK == nil || *ev.OK
	mark := r.th.ok.Render("✓")
	if !ok {
		mark = r.th.fail.Render("✗")
	}
	summary := clean(ev.Summary)
	if summary == "" {
		summary = clean(ev.ToolName)
	}
	head := mark + " " + r.th.bold.Render(oneLine(summary, r.width-14)) + r.th.dim.Render(" "+duration(time.Duration(ev.DurationMS)*time.Millisecond))
	var b strings.Builder
	b.WriteString(head)
	content := ""
	if ev.Message != nil {
		content = ev.Message.Content
	}
	if d := extractDiff(content); ok && d != "" && isEditTool(ev.ToolName) {
		b.WriteString("\n")
		b.WriteString(r.diff(d))
		return b.String()
	}
	// The whole result, when the event carries it, so that the count of
	// lines not shown is right (the event's Preview is cut to a few
	// hundred bytes).
	preview := content
	if preview == "" {
		preview = ev.Preview
	}
	if p := r.preview(preview); p != "" {
		b.WriteString("\n")
		b.WriteString(p)
	}
	return b.String()
}

// preview renders the first lines of a result, indented and dimmed, and
// how many more there are.
func (r *renderer) preview(s string) string {
	s = strings.TrimRight(s, "\n ")
	if s == "" {
		return ""
	}
	head, more := s, 0
	if i := nthIndex(s, '\n', previewLines); i >= 0 {
		head, more = s[:i], strings.Count(s[i:], "\n")
	}
	lines := strings.Split(clean(head), "\n")
	for i, l := range lines {
		lines[i] = r.th.dim.Render("  │ " + ansi.Truncate(l, max(r.width-4, 8), "…"))
	}
	if more > 0 {
		lines = append(lines, r.th.dim.Render(fmt.Sprintf("  │ … %d more lines", more)))
	}
	return strings.Join(lines, "\n")
}

// nthIndex returns the index of the n-th c in s (from 1), or -1.
func nthIndex(s string, c byte, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := strings.IndexByte(s[off:], c)
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off - 1
}

// diff colours a unified diff, cut to diffLines lines.
func (r *renderer) diff(d string) string {
	lines := strings.Split(strings.TrimRight(clean(d), "\n"), "\n")
	more := len(lines) - diffLines
	if more > 0 {
		lines = lines[:diffLines]
	}
	w := max(r.width-4, 8)
	for i, l := range lines {
		l = ansi.Truncate(l, w, "…")
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			l = r.th.bold.Render(l)
		case strings.HasPrefix(l, "+"):
			l = r.th.add.Render(l)
		case strings.HasPrefix(l, "-"):
			l = r.th.del.Render(l)
		case strings.HasPrefix(l, "@@"):
			l = r.th.hunk.Render(l)
		}
		lines[i] = "    " + l
	}
	if more > 0 {
		lines = append(lines, r.th.dim.Render(fmt.Sprintf("    … %d more lines", more)))
	}
	return strings.Join(lines, "\n")
}

// isEditTool reports whether a tool's result carries a diff of its change.
func isEditTool(name string) bool {
	switch name {
	case "edit_file", "write_file", "apply_patch":
		return true
	}
	return false
}

// extractDiff returns the unified diff in a tool result: from its first
// "--- " line on, or "" if there is none.
func extractDiff(s string) string {
	if strings.HasPrefix(s, "--- ") {
		return s
	}
	if i := strings.Index(s, "\n--- "); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// oneLine returns the first line of s cut to w cells.
func oneLine(s string, w int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return ansi.Truncate(s, max(w, 8), "…")
}

// duration formats a duration the way the UI shows it: 850ms, 2.1s, 1m05s.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// tokens formats a token count compactly: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}
