// Package mdterm renders the Markdown written by the model as terminal
// text: word-wrapped paragraphs, headings, emphasis, lists, quotes, tables
// and fenced code blocks with a small keyword highlighter.
//
// It exists so that the TUI can show assistant messages nicely without the
// start-up cost of a full Markdown and syntax-highlighting stack (whose
// package initialisation costs tens of milliseconds at every start of the
// binary, including the non-interactive mx-claw run). It covers the Markdown
// that models commonly write, not all of CommonMark.
//
// The package imports nothing of mx-claw. It is meant to be imported by the
// TUI (internal/tui) only; other front ends print Markdown as it is.
package mdterm

// Style says how the elements of a document look. Every field but NoColor
// and Ticks holds the parameters of an ANSI SGR escape sequence, such as
// "1;36" for bold cyan; an empty field leaves the element unstyled.
type Style struct {
	// NoColor drops every escape sequence: the output is layout only.
	NoColor bool
	// Ticks keeps the backticks around inline code, for styles that cannot
	// tell code apart otherwise.
	Ticks bool

	// Heading styles headings, including their leading #s.
	Heading string
	// Strong styles **strong** text.
	Strong string
	// Emph styles *emphasised* text.
	Emph string
	// Strike styles ~~struck~~ text.
	Strike string
	// Code styles `inline code`.
	Code string
	// Link styles the text of a link.
	Link string
	// URL styles the address shown after the text of a link.
	URL string
	// Quote styles the bar in front of block quotes.
	Quote string
	// Rule styles horizontal rules.
	Rule string
	// Marker styles list bullets and numbers.
	Marker string
	// Table styles the lines between the cells of a table.
	Table string
	// Label styles the language line above a fenced code block.
	Label string
	// CodeBlock styles the lines of a fenced code block.
	CodeBlock string
	// Keyword, String, Comment and Number style the tokens of highlighted
	// code, on top of CodeBlock.
	Keyword, String, Comment, Number string
}

// DefaultStyle is a style with colours for dark terminals.
func DefaultStyle() Style {
	return Style{
		Heading:   "1;38;5;39",
		Strong:    "1",
		Emph:      "3",
		Strike:    "9",
		Code:      "38;5;203;48;5;236",
		Link:      "38;5;44;4",
		URL:       "38;5;246",
		Quote:     "38;5;243",
		Rule:      "38;5;240",
		Marker:    "38;5;39",
		Table:     "38;5;240",
		Label:     "2",
		CodeBlock: "38;5;252",
		Keyword:   "38;5;141",
		String:    "38;5;150",
		Comment:   "38;5;244;3",
		Number:    "38;5;215",
	}
}

// MonoStyle is a style without colours for NO_COLOR: bold, italic, faint
// and underline only, with the backticks of inline code kept.
func MonoStyle() Style {
	return Style{
		Ticks:   true,
		Heading: "1",
		Strong:  "1",
		Emph:    "3",
		Strike:  "9",
		Link:    "4",
		URL:     "2",
		Quote:   "2",
		Rule:    "2",
		Table:   "2",
		Label:   "2",
		Comment: "2",
	}
}

// on returns the escape sequence that turns on params, or nothing.
func (s *Style) on(params string) string {
	if s.NoColor || params == "" {
		return ""
	}
	return "\x1b[" + params + "m"
}

// wrapIn styles text with params, restoring the enclosing styles after it.
func (s *Style) wrapIn(params, text string, outer []string) string {
	if s.NoColor || params == "" || text == "" {
		return text
	}
	return s.on(params) + text + reset + s.reopen(outer)
}

// reopen turns the styles of stack back on after a reset.
func (s *Style) reopen(stack []string) string {
	out := ""
	for _, p := range stack {
		out += s.on(p)
	}
	return out
}

const reset = "\x1b[0m"
